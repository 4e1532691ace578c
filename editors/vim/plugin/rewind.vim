" rewind, the record-and-replay debugger, in Vim through vimspector.
"
" Set-up (docs/editors.md): put editors/vim on 'runtimepath' after vimspector, and copy or
" link gadgets/rewind.json into vimspector's gadgets/linux/.gadgets.d/ and
" configurations/rewind.json into its configurations/linux/_all/. Then :call vimspector#Launch()
" offers the "rewind:" configurations.
"
" vimspector has no reverse-execution commands; these send DAP's stepBack and reverseContinue
" and rewind's own rewind/stepInBack and rewind/stepOutBack (gdb's reverse-step and
" reverse-finish) for the current thread of the current vimspector session.

if exists('g:loaded_rewind_vimspector') || !has('python3')
  finish
endif
let g:loaded_rewind_vimspector = 1

command! -bar RewindStepBack call rewind#Request('stepBack')
command! -bar RewindReverseContinue call rewind#Request('reverseContinue')
command! -bar RewindStepInBack call rewind#Request('rewind/stepInBack')
command! -bar RewindStepOutBack call rewind#Request('rewind/stepOutBack')

nnoremap <silent> <Plug>RewindStepBack :<C-u>RewindStepBack<CR>
nnoremap <silent> <Plug>RewindReverseContinue :<C-u>RewindReverseContinue<CR>
nnoremap <silent> <Plug>RewindStepInBack :<C-u>RewindStepInBack<CR>
nnoremap <silent> <Plug>RewindStepOutBack :<C-u>RewindStepOutBack<CR>
