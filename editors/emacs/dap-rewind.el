;;; dap-rewind.el --- rewind, the record-and-replay debugger, in dap-mode -*- lexical-binding: t -*-

;; Usage: (add-to-list 'load-path "/path/to/rewind/editors/emacs") (require 'dap-rewind)
;; then M-x dap-debug and pick a "rewind:" template, or call `dap-debug' with a plist like
;; (:type "rewind" :request "launch" :program "./a.out" :console "integratedTerminal").
;; The launch and attach arguments are in rewind's docs/dap.md.

;;; Commentary:

;; Registers the "rewind" debug type: dap-mode starts `rewind dap' (a Debug Adapter Protocol
;; server on stdin/stdout), or connects to a `rewind dap --listen PORT' server when the
;; configuration has :debugServer PORT (and :host).  dap-mode has no reverse-execution
;; commands of its own: `dap-rewind-step-back' and `dap-rewind-reverse-continue' send DAP's
;; stepBack and reverseContinue for the stopped thread, like `dap-next' sends next;
;; `dap-rewind-step-in-back' and `dap-rewind-step-out-back' send rewind's own
;; rewind/stepInBack and rewind/stepOutBack (gdb's reverse-step and reverse-finish).

;;; Code:

(require 'dap-mode)

(defgroup dap-rewind nil
  "rewind, the record-and-replay debugger, in dap-mode."
  :group 'dap-mode)

(defcustom dap-rewind-command '("rewind" "dap")
  "The command that serves DAP on stdin/stdout."
  :type '(repeat string)
  :group 'dap-rewind)

(defun dap-rewind--populate (conf)
  "Fill in CONF, a rewind debug configuration, for `dap-debug'."
  (unless (plist-get conf :debugServer)
    (dap--put-if-absent conf :dap-server-path dap-rewind-command))
  (when (and (equal (plist-get conf :request) "launch")
             (member (plist-get conf :mode) '(nil "record")))
    (dap--put-if-absent conf :program (expand-file-name (read-file-name "Program to record: ")))
    (dap--put-if-absent conf :cwd default-directory))
  conf)

(dap-register-debug-provider "rewind" #'dap-rewind--populate)

(dap-register-debug-template
 "rewind: Record & Debug"
 (list :type "rewind" :request "launch" :name "rewind: Record & Debug"
       :console "integratedTerminal"))
(dap-register-debug-template
 "rewind: Replay latest trace"
 (list :type "rewind" :request "launch" :mode "replay" :name "rewind: Replay"))
(dap-register-debug-template
 "rewind: Attach to remote replay"
 (list :type "rewind" :request "attach" :name "rewind: Attach"
       :debugServer 4711 :host "127.0.0.1"
       ;; The server's token: `rewind dap --listen' prints the file that holds it.
       :token ""))

(defun dap-rewind-step-back ()
  "Step back to the previous line of the stopped thread (DAP stepBack)."
  (interactive)
  (dap--step "stepBack" (dap--cur-session-or-die)))

(defun dap-rewind-reverse-continue ()
  "Run backwards to the previous breakpoint hit (DAP reverseContinue)."
  (interactive)
  (dap--step "reverseContinue" (dap--cur-session-or-die)))

(defun dap-rewind-step-in-back ()
  "Step back into the last line of a function called on the line before (rewind/stepInBack)."
  (interactive)
  (dap--step "rewind/stepInBack" (dap--cur-session-or-die)))

(defun dap-rewind-step-out-back ()
  "Go back out of the current function to its call in the caller (rewind/stepOutBack)."
  (interactive)
  (dap--step "rewind/stepOutBack" (dap--cur-session-or-die)))

(provide 'dap-rewind)
;;; dap-rewind.el ends here
