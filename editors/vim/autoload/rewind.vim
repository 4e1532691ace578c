" rewind's reverse commands for vimspector (plugin/rewind.vim).

" Sends the DAP request a:command (stepBack, reverseContinue, rewind/stepInBack or
" rewind/stepOutBack) for the current thread of the current vimspector session, as
" vimspector sends its own steps: with the thread and the stepping granularity, marking the
" thread running until the adapter reports the stop. Says so when no session is connected.
function! rewind#Request(command) abort
  if !exists(':VimspectorReset')
    echohl ErrorMsg | echomsg 'rewind: vimspector is not loaded' | echohl None
    return
  endif
  py3 << EOF
def _rewind_request(command):
  # vimspector keeps its sessions in _vimspector_session; the one whose stack the user looks
  # at is the current one (as its CurrentSession decorator chooses).
  root = globals().get('_vimspector_session')
  session = root
  if root is not None and root._stackTraceView:
    session = root._stackTraceView.GetCurrentSession() or root
  if session is None or not session._connection:
    vim.command("echohl ErrorMsg | echomsg 'rewind: no debug session' | echohl None")
    return
  thread = session._stackTraceView.GetCurrentThreadId()
  if thread is None:
    vim.command("echohl ErrorMsg | echomsg 'rewind: no stopped thread' | echohl None")
    return

  def running(*_):
    session._stackTraceView.OnContinued(session, {'threadId': thread})
    session.ClearCurrentPC()

  session._connection.DoRequest(running, {
    'command': command,
    'arguments': {
      'threadId': thread,
      'granularity': session._CurrentSteppingGranularity(),
    },
  })

_rewind_request(vim.eval('a:command'))
EOF
endfunction
