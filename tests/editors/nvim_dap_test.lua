-- Neovim with nvim-dap drives rewind as a user would. Run by tests/integration/neovim_dap.sh:
--   nvim --headless -u NONE -i NONE --cmd 'set rtp+=NVIM_DAP' --cmd 'set rtp+=editors/neovim'
--        -c 'luafile tests/editors/nvim_dap_test.lua'
-- with REWIND (the rewind binary), PROGRAM (symbols_demo built with -g -O0), SOURCE (its .c
-- file) and OUT (a scratch directory) in the environment. Exits 0 when every check held; on a
-- failure it prints what was expected and seen, and exits 1.
--
-- Real nvim-dap, real `rewind dap` on pipes, a real recording: a breakpoint is toggled in the
-- source buffer, Record & Debug runs the program in nvim-dap's terminal buffer, and the
-- checks read what the user sees: the line the cursor is on in the source window after each
-- stop, and the value the adapter evaluates for an expression in the stopped frame.

local function env(name)
  return os.getenv(name) or error('Set ' .. name)
end

local OUT, SOURCE, PROGRAM = env('OUT'), env('SOURCE'), env('PROGRAM')
vim.env.REWIND_TRACE_DIR = OUT .. '/traces'

local dap = require('dap')
local rewind = require('rewind')
rewind.setup({ command = env('REWIND') })

local checks = 0
local function check(what, expected, seen)
  checks = checks + 1
  if expected ~= seen then
    error(string.format('%s: expected %s, saw %s', what, vim.inspect(expected), vim.inspect(seen)), 2)
  end
end

-- The test runs as a coroutine that yields to Neovim's event loop while it waits, so that
-- nvim-dap's callbacks (scheduled on that loop) run.
local test_co
local function wait(what, predicate, ms)
  local deadline = vim.loop.now() + (ms or 60000)
  while not predicate() do
    if vim.loop.now() > deadline then
      error('timed out waiting for ' .. what, 2)
    end
    vim.defer_fn(function()
      coroutine.resume(test_co)
    end, 20)
    coroutine.yield()
  end
end

-- Stops are counted when nvim-dap has jumped to the frame and asked for its scopes.
local stops = 0
dap.listeners.after.scopes['rewind-test'] = function()
  stops = stops + 1
end
local messages = {}
local notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(messages, msg)
  return notify(msg, level, opts)
end

local source_buf
-- Waits for the next stop after `action` and returns the cursor's line in the source window.
local function stop_after(action)
  local before = stops
  action()
  wait('the debugger to stop (messages: ' .. table.concat(messages, ' | ') .. ')', function()
    return stops > before
  end, 120000)
  local win = vim.fn.bufwinid(source_buf)
  if win == -1 then
    error('the source buffer is not shown after the stop')
  end
  return vim.api.nvim_win_get_cursor(win)[1]
end

-- What the adapter evaluates for `expression` in the current frame (the REPL's answer).
local function eval(expression)
  local result
  dap.session():evaluate(expression, function(err, response)
    result = err and ('error: ' .. tostring(err.message or err)) or response.result
  end)
  wait('the value of ' .. expression, function()
    return result ~= nil
  end)
  return result
end

-- With CAPTURE set (scripts/capture-neovim.sh runs this test in a real terminal), the screen
-- after the step back is held for a screenshot: the scopes sidebar is opened, CAPTURE.ready
-- written, and the test waits for CAPTURE.done.
local function hold_for_capture()
  local capture = os.getenv('CAPTURE')
  if not capture then
    return
  end
  local widgets = require('dap.ui.widgets')
  widgets.sidebar(widgets.scopes, { width = 40 }, 'vsplit').open()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)):find('dap-terminal', 1, true) then
      vim.api.nvim_win_set_height(win, 6)
    end
  end
  vim.api.nvim_set_current_win(vim.fn.bufwinid(source_buf))
  vim.cmd('normal! zz')
  vim.cmd('highlight SignColumn guibg=NONE ctermbg=NONE')
  local opened = vim.loop.now()
  wait('the scopes to be shown', function()
    return vim.loop.now() - opened > 1000
  end)
  vim.cmd('redraw!')
  vim.fn.writefile({}, capture .. '.ready')
  wait('the screenshot', function()
    return vim.loop.fs_stat(capture .. '.done') ~= nil
  end, 60000)
end

local function line_of(text)
  for number, line in ipairs(vim.api.nvim_buf_get_lines(source_buf, 0, -1, false)) do
    if line:find(text, 1, true) then
      return number
    end
  end
  error('no line holds ' .. text)
end

local function toggle_breakpoint_at(line)
  vim.api.nvim_set_current_buf(source_buf)
  vim.api.nvim_win_set_cursor(0, { line, 0 })
  dap.toggle_breakpoint()
end

local function run()
  vim.cmd('edit ' .. vim.fn.fnameescape(SOURCE))
  source_buf = vim.api.nvim_get_current_buf()
  local add_line = line_of('total += i;')
  local store_line = line_of('sink = total;')
  local call_line = line_of('int sum = loop_sum(3);')
  local return_line = line_of('return total;')

  -- A breakpoint on the store in loop_sum, then Record & Debug (the configuration setup()
  -- offers, with the program filled in instead of typed at the prompt).
  toggle_breakpoint_at(store_line)
  local config = vim.deepcopy(rewind.configurations[1])
  check('the first configuration', 'rewind: Record & Debug', config.name)
  config.program = PROGRAM
  config.cwd = OUT
  check('stop at the breakpoint', store_line, stop_after(function()
    dap.run(config)
  end))
  -- The recording ran in nvim-dap's terminal buffer.
  local terminal_text = ''
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(buf):find('dap-terminal', 1, true) then
      terminal_text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
    end
  end
  check('the program output in the terminal buffer', true,
    terminal_text:find('triangle 7 17.75 hello 2 5 1 47', 1, true) ~= nil)
  check('i at the first hit', '0', eval('i'))
  check('total at the first hit', '0', eval('total'))

  -- Forwards: two more iterations.
  check('second hit', store_line, stop_after(dap.continue))
  check('i at the second hit', '1', eval('i'))
  check('third hit', store_line, stop_after(dap.continue))
  check('total at the third hit', '3', eval('total'))

  -- Step back (nvim-dap's own step_back): the line before, total without i added yet.
  check('step back', add_line, stop_after(dap.step_back))
  check('i after step back', '2', eval('i'))
  check('total after step back', '1', eval('total'))
  hold_for_capture()

  -- Reverse-continue: the breakpoint's earlier hits, latest first.
  check('reverse-continue', store_line, stop_after(dap.reverse_continue))
  check('i after reverse-continue', '1', eval('i'))
  check('second reverse-continue', store_line, stop_after(dap.reverse_continue))
  check('i at the first hit again', '0', eval('i'))
  check('total at the first hit again', '0', eval('total'))

  -- rewind's reverse steps (the :Rewind commands): out of loop_sum backwards to its call,
  -- forward over it with the breakpoint toggled off, then back into its last line (the
  -- closing brace after `return total;`).
  toggle_breakpoint_at(store_line)
  check(':RewindStepOutBack', call_line, stop_after(function()
    vim.cmd('RewindStepOutBack')
  end))
  check('next over the call', call_line + 1, stop_after(dap.step_over))
  check('sum after the call', '3', eval('sum'))
  check(':RewindStepInBack', return_line + 1, stop_after(function()
    vim.cmd('RewindStepInBack')
  end))
  check('total in the callee', '3', eval('total'))
  -- :RewindReverseContinue with no breakpoint left: back to the start of the recording.
  vim.cmd('RewindReverseContinue')
  wait('the reverse-continue to the start', function()
    return dap.session() and dap.session().stopped_thread_id ~= nil
  end, 120000)

  -- Terminate ends the session.
  dap.terminate()
  wait('the session to end', function()
    return dap.session() == nil
  end)
end

test_co = coroutine.create(function()
  local ok, err = xpcall(run, debug.traceback)
  if ok then
    io.stdout:write(string.format('nvim-dap: %d checks held\n', checks))
    vim.cmd('qall!')
  else
    io.stderr:write('nvim-dap test failed after ' .. checks .. ' checks: ' .. tostring(err) .. '\n')
    io.stderr:write('messages: ' .. table.concat(messages, ' | ') .. '\n')
    vim.cmd('cquit 1')
  end
end)
coroutine.resume(test_co)
