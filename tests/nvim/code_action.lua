-- Neovim end-to-end check of `retrylint lsp` (run by tests/lsp.rs):
--   nvim --headless --clean -c "luafile tests/nvim/code_action.lua"
-- with RETRYLINT_BIN, RETRYLINT_ROOT, RETRYLINT_FILE and RETRYLINT_OUT set. Works with
-- Neovim 0.7 (Debian bookworm: vim.lsp.start_client) and later (vim.lsp.start).
-- Writes RETRYLINT_OUT as JSON: the diagnostics received before and after the code action
-- ({code, lnum}), the action's title, or `error`; the edited buffer is written to its file.

local bin = assert(os.getenv("RETRYLINT_BIN"), "RETRYLINT_BIN")
local root = assert(os.getenv("RETRYLINT_ROOT"), "RETRYLINT_ROOT")
local file = assert(os.getenv("RETRYLINT_FILE"), "RETRYLINT_FILE")
local out = assert(os.getenv("RETRYLINT_OUT"), "RETRYLINT_OUT")
local timeout = 30000
local result = {}

local function codes(bufnr)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local code = d.code
    if code == nil and d.user_data and d.user_data.lsp then
      code = d.user_data.lsp.code
    end
    table.insert(found, { code = code, lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col })
  end
  table.sort(found, function(a, b)
    if a.lnum ~= b.lnum then return a.lnum < b.lnum end
    return tostring(a.code) < tostring(b.code)
  end)
  return found
end

local function find(found, code, lnum)
  for _, d in ipairs(found) do
    if d.code == code and (lnum == nil or d.lnum == lnum) then
      return d
    end
  end
  return nil
end

local function run()
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  local config = {
    name = "retrylint",
    cmd = { bin, "lsp" },
    root_dir = root,
    flags = { debounce_text_changes = 20 },
  }
  local client_id
  if vim.lsp.start then
    client_id = vim.lsp.start(config)
  else
    client_id = vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(bufnr, client_id)
  end
  assert(client_id, "the client started")

  local ok = vim.wait(timeout, function()
    return find(codes(bufnr), "unjittered-schedule") ~= nil
  end, 50)
  assert(ok, "no unjittered-schedule diagnostic arrived")
  result.before = codes(bufnr)

  -- The quick fix for the unjittered policy, requested at the finding and applied.
  local target = find(result.before, "unjittered-schedule")
  local client = vim.lsp.get_client_by_id(client_id)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = {
      start = { line = target.lnum, character = target.col },
      ["end"] = { line = target.end_lnum, character = target.end_col },
    },
    context = { diagnostics = {}, only = { "quickfix" } },
  }
  local response, err = client.request_sync("textDocument/codeAction", params, timeout, bufnr)
  assert(response and not response.err, "codeAction failed: " .. vim.inspect(err or (response and response.err)))
  local chosen
  for _, action in ipairs(response.result or {}) do
    if action.title:find("Schedule.jittered", 1, true) then
      chosen = action
    end
  end
  assert(chosen, "no jitter fix among " .. vim.inspect(response.result))
  vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding or "utf-16")
  result.applied = chosen.title

  -- The edit reaches the server as didChange; its findings come back without the jitter one.
  ok = vim.wait(timeout, function()
    local now = codes(bufnr)
    return find(now, "unjittered-schedule", target.lnum) == nil and find(now, "inline-schedule", target.lnum) ~= nil
  end, 50)
  assert(ok, "the unjittered-schedule diagnostic did not go: " .. vim.inspect(codes(bufnr)))
  result.after = codes(bufnr)
  vim.api.nvim_buf_call(bufnr, function()
    vim.cmd("silent write")
  end)
end

local ok, err = pcall(run)
if not ok then
  result.error = tostring(err)
end
local file_out = assert(io.open(out, "w"))
file_out:write(vim.fn.json_encode(result))
file_out:close()
if ok then
  vim.cmd("qall!")
else
  vim.cmd("cquit 1")
end
