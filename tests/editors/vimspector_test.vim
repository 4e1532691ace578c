" Vim with vimspector drives rewind as a user would. Run by tests/integration/vim_vimspector.sh
" in a pseudo-terminal (script(1)):
"   vim -N -u NONE -i NONE --cmd 'set rtp+=VIMSPECTOR,editors/vim' -S vimspector_test.vim
" with OUT (a scratch directory), SOURCE (symbols_demo.c), PROGRAM (it built with -g -O0),
" RESULT (where the outcome is written) in the environment, `rewind` on PATH, and
" g:vimspector_base_dir holding editors/vim's gadget and configuration files, installed as
" docs/editors.md says. The outcome is one line in RESULT: "PASS N checks" or the failure.
"
" Real vimspector, real `rewind dap` on pipes, a real recording: a breakpoint toggled in the
" source buffer, the "rewind: Record & Debug" configuration with the program given as its
" ${program} variable, vimspector's own continue and step over, and editors/vim's :Rewind
" reverse commands; the checks read what the user sees: the cursor's line in vimspector's
" code window after each stop, and the last line of its console after evaluating there.

set nocompatible
filetype on
set shortmess+=atIF cmdheight=10 nomore
" A screen the size of a user's (script(1) gives 24x80): vimspector's terminal gets a few lines.
set lines=60 columns=200
runtime plugin/vimspector.vim
runtime plugin/rewind.vim

let s:checks = 0
let s:stops = 0
autocmd User VimspectorJumpedToFrame let s:stops += 1

function! s:Check(what, expected, seen) abort
  let s:checks += 1
  if a:expected !=# a:seen
    throw printf('%s: expected %s, saw %s', a:what, string(a:expected), string(a:seen))
  endif
endfunction

" Lets Vim run its channel and timer callbacks (vimspector's) until a:cond holds.
function! s:Wait(what, cond, ms) abort
  let start = reltime()
  while !eval(a:cond)
    if reltimefloat(reltime(start)) * 1000 > a:ms
      throw 'timed out waiting for ' . a:what
    endif
    sleep 20m
  endwhile
endfunction

" Runs a:cmd, waits for the next stop, returns the cursor's line in the code window.
function! s:StopAfter(cmd) abort
  let before = s:stops
  execute a:cmd
  call s:Wait('the debugger to stop after ' . a:cmd, 's:stops > ' . before, 120000)
  let win = bufwinid(s:source_buf)
  if win == -1
    throw 'the source buffer is not shown after ' . a:cmd
  endif
  return line('.', win)
endfunction

" What vimspector's console prints for a:expression in the current frame.
function! s:Eval(expression) abort
  let console = bufnr('vimspector.Console')
  let before = console == -1 ? 0 : len(getbufline(console, 1, '$'))
  call vimspector#EvaluateConsole(a:expression)
  call s:Wait('the value of ' . a:expression,
        \ 'bufnr("vimspector.Console") != -1 && len(getbufline(bufnr("vimspector.Console"), 1, "$")) > ' . before, 60000)
  return getbufline(bufnr('vimspector.Console'), '$')[0]
endfunction

function! s:LineOf(text) abort
  let lines = getbufline(s:source_buf, 1, '$')
  let i = index(map(copy(lines), 'stridx(v:val, a:text) >= 0'), 1)
  if i < 0
    throw 'no line holds ' . a:text
  endif
  return i + 1
endfunction

function! s:ToggleBreakpointAt(line) abort
  call win_gotoid(bufwinid(s:source_buf))
  call cursor(a:line, 1)
  call vimspector#ToggleBreakpoint()
endfunction

function! s:Run() abort
  execute 'edit ' . fnameescape($SOURCE)
  let s:source_buf = bufnr('%')
  let add_line = s:LineOf('total += i;')
  let store_line = s:LineOf('sink = total;')
  let call_line = s:LineOf('int sum = loop_sum(3);')
  let return_line = s:LineOf('return total;')

  call s:ToggleBreakpointAt(store_line)
  call s:Check('stop at the breakpoint', store_line, s:StopAfter(
        \ "call vimspector#LaunchWithSettings({'configuration': 'rewind: Record & Debug', "
        \ . "'program': $PROGRAM, 'args': ''})"))
  " The recording ran in vimspector's terminal window (DAP runInTerminal).
  let shown = join(map(term_list(), 'join(getbufline(v:val, 1, "$"), "\n")'), "\n")
  call s:Check('the program output in a terminal', 1,
        \ stridx(shown, 'triangle 7 17.75 hello 2 5 1 47') >= 0)
  call s:Check('i at the first hit', '0', s:Eval('i'))
  call s:Check('total at the first hit', '0', s:Eval('total'))
  call s:Check('second hit', store_line, s:StopAfter('call vimspector#Continue()'))
  call s:Check('i at the second hit', '1', s:Eval('i'))
  call s:Check('third hit', store_line, s:StopAfter('call vimspector#Continue()'))
  call s:Check('total at the third hit', '3', s:Eval('total'))

  " editors/vim's reverse commands.
  call s:Check(':RewindStepBack', add_line, s:StopAfter('RewindStepBack'))
  call s:Check('i after step back', '2', s:Eval('i'))
  call s:Check('total after step back', '1', s:Eval('total'))
  call s:Check(':RewindReverseContinue', store_line, s:StopAfter('RewindReverseContinue'))
  call s:Check('i after reverse-continue', '1', s:Eval('i'))
  call s:Check('second reverse-continue', store_line, s:StopAfter('RewindReverseContinue'))
  call s:Check('i at the first hit again', '0', s:Eval('i'))

  call s:ToggleBreakpointAt(store_line)
  call s:Check(':RewindStepOutBack', call_line, s:StopAfter('RewindStepOutBack'))
  call s:Check('step over the call', call_line + 1, s:StopAfter('call vimspector#StepOver()'))
  call s:Check('sum after the call', '3', s:Eval('sum'))
  call s:Check(':RewindStepInBack', return_line + 1, s:StopAfter('RewindStepInBack'))
  call s:Check('total in the callee', '3', s:Eval('total'))

  call vimspector#Reset()
  call s:Wait('the session to end', "py3eval('_vimspector_session is None or _vimspector_session._connection is None')", 30000)
endfunction

try
  call s:Run()
  call writefile([printf('PASS %d checks', s:checks)], $RESULT)
catch
  call writefile([printf('FAIL after %d checks: %s (%s)', s:checks, v:exception, v:throwpoint)],
        \ $RESULT)
endtry
qall!
