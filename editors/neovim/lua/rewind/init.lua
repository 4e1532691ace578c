-- rewind, the record-and-replay debugger, in Neovim through nvim-dap (0.6.0 or newer).
--
-- Usage, with nvim-dap installed:
--   set runtimepath+=/path/to/rewind/editors/neovim
--   lua require('rewind').setup()          -- or setup({ command = '/path/to/rewind' })
-- then :lua require('dap').continue() offers the "rewind:" configurations for C, C++, Rust,
-- Zig, Python and R buffers. The launch and attach arguments are in rewind's docs/dap.md.
--
-- nvim-dap sends DAP's stepBack and reverseContinue itself (require('dap').step_back() and
-- .reverse_continue(), REPL .back and .rc) because rewind announces supportsStepBack. DAP has
-- no reverse step-in or step-out: step_in_back() and step_out_back() below send rewind's own
-- rewind/stepInBack and rewind/stepOutBack (gdb's reverse-step and reverse-finish).

local M = {}

--- The configurations setup() adds: Record & Debug, replay the latest trace, attach to a
--- `rewind dap --listen PORT` server. Functions are asked for when the configuration runs.
M.configurations = {
  {
    type = 'rewind',
    request = 'launch',
    name = 'rewind: Record & Debug',
    program = function()
      return vim.fn.input('Program to record: ', vim.fn.getcwd() .. '/', 'file')
    end,
    cwd = '${workspaceFolder}',
    console = 'integratedTerminal',
  },
  {
    type = 'rewind',
    request = 'launch',
    mode = 'replay',
    name = 'rewind: Replay latest trace',
  },
  {
    type = 'rewind',
    request = 'attach',
    name = 'rewind: Attach to remote replay',
    host = '127.0.0.1',
    debugServer = function()
      return tonumber(vim.fn.input('rewind server port: ', '4711'))
    end,
    -- `rewind dap --listen` prints the file that holds the token.
    token = function()
      return vim.fn.inputsecret('rewind server token: ')
    end,
  },
}

-- Sends one of rewind's reverse requests for the stopped thread, the way nvim-dap sends its
-- own steps (Session:_step: counts, the thread picker and the stop sign all apply).
local function reverse_step(command)
  local session = require('dap').session()
  if not session then
    vim.notify('rewind: no debug session', vim.log.levels.ERROR)
    return
  end
  session:_step(command)
end

--- Back into the last line of a function called on the line before (rewind/stepInBack).
function M.step_in_back()
  reverse_step('rewind/stepInBack')
end

--- Back out of the current function to its call in the caller (rewind/stepOutBack).
function M.step_out_back()
  reverse_step('rewind/stepOutBack')
end

--- Registers the "rewind" adapter and configurations with nvim-dap, and the commands
--- :RewindStepBack, :RewindReverseContinue, :RewindStepInBack and :RewindStepOutBack.
--- opts.command: the rewind binary (default "rewind", looked up on PATH);
--- opts.filetypes: where the configurations are offered (default C, C++, Rust, Zig, Python, R).
function M.setup(opts)
  opts = opts or {}
  local dap = require('dap')
  local command = opts.command or 'rewind'
  -- `rewind dap` serves DAP on stdin/stdout; an attach configuration with debugServer
  -- connects to a server started with `rewind dap --listen PORT` instead.
  dap.adapters.rewind = function(callback, config)
    if config.request == 'attach' and config.debugServer then
      callback({ type = 'server', host = config.host or '127.0.0.1', port = config.debugServer })
    else
      callback({ type = 'executable', command = command, args = { 'dap' } })
    end
  end
  for _, filetype in ipairs(opts.filetypes or { 'c', 'cpp', 'rust', 'zig', 'python', 'r' }) do
    dap.configurations[filetype] = dap.configurations[filetype] or {}
    for _, configuration in ipairs(M.configurations) do
      table.insert(dap.configurations[filetype], configuration)
    end
  end
  local commands = {
    RewindStepBack = dap.step_back,
    RewindReverseContinue = dap.reverse_continue,
    RewindStepInBack = M.step_in_back,
    RewindStepOutBack = M.step_out_back,
  }
  for name, fn in pairs(commands) do
    vim.api.nvim_create_user_command(name, function() fn() end, {})
  end
end

return M
