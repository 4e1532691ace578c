;;; dap-rewind-test.el --- Emacs dap-mode drives rewind as a user would -*- lexical-binding: t -*-

;; Run by tests/integration/emacs_dap_mode.sh:
;;   emacs --batch -q -L editors/emacs -l dap-rewind-test.el -f ert-run-tests-batch-and-exit
;; with REWIND (the rewind binary), PROGRAM (symbols_demo built with -g -O0), SOURCE (its .c
;; file) and OUT (a scratch directory) in the environment.
;;
;; Real dap-mode (Debian's elpa-dap-mode), real `rewind dap' on pipes, a real recording: the
;; session is started with `dap-debug' and a breakpoint toggled in the source buffer; the
;; checks read what the user sees: the line point is on in the source buffer, the value
;; `dap-eval' shows in the echo area, and the terminal buffer the program's output went to.

;;; Code:

(require 'ert)
(require 'dap-rewind)
(require 'dap-ui)  ; dap-mode expects it loaded, as `dap-auto-configure-mode' does

(defvar dap-rewind-test--evaluated nil "Values shown by `dap-eval', newest first.")

(advice-add 'dap-overlays--display-interactive-eval-result :before
            (lambda (value &rest _) (push value dap-rewind-test--evaluated)))

(defun dap-rewind-test--env (name)
  "The environment variable NAME, which must be set."
  (or (getenv name) (error "Set %s" name)))

(defun dap-rewind-test--wait (what predicate &optional seconds)
  "Process input until PREDICATE holds; fail naming WHAT after SECONDS (default 60)."
  (let ((deadline (+ (float-time) (or seconds 60))))
    (while (not (funcall predicate))
      (when (> (float-time) deadline) (error "Timed out waiting for %s" what))
      (accept-process-output nil 0.05))))

(defun dap-rewind-test--stopped-line (source)
  "Waits for the session to stop; returns the line of point in SOURCE's buffer."
  (dap-rewind-test--wait "the debugger to stop"
                         (lambda () (and (dap--cur-session)
                                         (dap--debug-session-active-frame (dap--cur-session))))
                         120)
  (with-current-buffer (get-file-buffer source) (line-number-at-pos)))

(defun dap-rewind-test--eval (expression)
  "What `dap-eval' shows for EXPRESSION."
  (let ((before (length dap-rewind-test--evaluated)))
    (dap-eval expression)
    (dap-rewind-test--wait (format "the value of %s" expression)
                           (lambda () (> (length dap-rewind-test--evaluated) before)))
    (car dap-rewind-test--evaluated)))

(defun dap-rewind-test--line-of (source text)
  "The line number of the first line of SOURCE that contains TEXT."
  (with-current-buffer (find-file-noselect source)
    (save-excursion
      (goto-char (point-min))
      (search-forward text)
      (line-number-at-pos))))

(ert-deftest dap-rewind-record-and-debug ()
  "Record & Debug in a terminal buffer, a breakpoint, continue, step back, reverse-continue,
step out and in backwards."
  (let* ((out (dap-rewind-test--env "OUT"))
         (source (dap-rewind-test--env "SOURCE"))
         (program (dap-rewind-test--env "PROGRAM"))
         (process-environment (cons (concat "REWIND_TRACE_DIR=" out "/traces")
                                    process-environment))
         (add-line (dap-rewind-test--line-of source "total += i;"))
         (store-line (dap-rewind-test--line-of source "sink = total;"))
         (call-line (dap-rewind-test--line-of source "int sum = loop_sum(3);"))
         (return-line (dap-rewind-test--line-of source "return total;")))
    (setq dap-breakpoints-file (expand-file-name "breakpoints" out)
          dap-rewind-command (list (dap-rewind-test--env "REWIND") "dap")
          ;; A terminal buffer without vterm (not packaged in Debian 12).
          dap-internal-terminal #'dap-internal-terminal-shell)
    ;; F9 in the source buffer: a breakpoint on the store in loop_sum.
    (with-current-buffer (find-file source)
      (goto-char (point-min))
      (forward-line (1- store-line))
      (dap-breakpoint-add))
    (dap-debug (list :type "rewind" :request "launch" :name "rewind: Record & Debug"
                     :program program :cwd out :console "integratedTerminal"))
    ;; The recording ran in a terminal buffer, then the replay stopped at the breakpoint.
    (should (= (dap-rewind-test--stopped-line source) store-line))
    (let ((terminal (seq-find (lambda (b) (string-match-p "rewind record" (buffer-name b)))
                              (buffer-list))))
      (should terminal)
      (should (string-match-p "triangle 7 17.75 hello 2 5 1 47"
                              (with-current-buffer terminal (buffer-string)))))
    (should (equal (dap-rewind-test--eval "i") "0"))
    (should (equal (dap-rewind-test--eval "total") "0"))
    ;; Forwards: two more iterations.
    (dap-continue (dap--cur-session) (dap--debug-session-thread-id (dap--cur-session)))
    (should (= (dap-rewind-test--stopped-line source) store-line))
    (should (equal (dap-rewind-test--eval "i") "1"))
    (dap-continue (dap--cur-session) (dap--debug-session-thread-id (dap--cur-session)))
    (should (= (dap-rewind-test--stopped-line source) store-line))
    (should (equal (dap-rewind-test--eval "total") "3"))
    ;; Step back: to the line before, where total does not have i added yet.
    (dap-rewind-step-back)
    (should (= (dap-rewind-test--stopped-line source) add-line))
    (should (equal (dap-rewind-test--eval "i") "2"))
    (should (equal (dap-rewind-test--eval "total") "1"))
    ;; Reverse-continue: the breakpoint's earlier hits, latest first.
    (dap-rewind-reverse-continue)
    (should (= (dap-rewind-test--stopped-line source) store-line))
    (should (equal (dap-rewind-test--eval "i") "1"))
    (dap-rewind-reverse-continue)
    (should (= (dap-rewind-test--stopped-line source) store-line))
    (should (equal (dap-rewind-test--eval "i") "0"))
    (should (equal (dap-rewind-test--eval "total") "0"))
    ;; rewind's own reverse steps: out of loop_sum backwards to its call in main, forward
    ;; over it (the breakpoint toggled off first, as with F9), then back into its last line
    ;; (the closing brace, after `return total;').
    (with-current-buffer (get-file-buffer source)
      (goto-char (point-min))
      (forward-line (1- store-line))
      (dap-breakpoint-toggle))
    (dap-rewind-step-out-back)
    (should (= (dap-rewind-test--stopped-line source) call-line))
    (dap-next (dap--cur-session))
    (should (= (dap-rewind-test--stopped-line source) (1+ call-line)))
    (should (equal (dap-rewind-test--eval "sum") "3"))
    (dap-rewind-step-in-back)
    (should (= (dap-rewind-test--stopped-line source) (1+ return-line)))
    (should (equal (dap-rewind-test--eval "total") "3"))
    ;; Disconnect ends the session.
    (let ((session (dap--cur-session)))
      (dap-disconnect session)
      (dap-rewind-test--wait "the session to end"
                             (lambda () (not (dap--session-running session)))))))

;;; dap-rewind-test.el ends here
