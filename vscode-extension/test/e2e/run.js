// End-to-end test of the extension in real VS Code (code-server), driven as a user would in
// Debian's chromium with playwright-core. It installs the built .vsix, opens samples/, sets a
// breakpoint in samples/c/crash.c, starts "rewind: Record & Debug", and checks on screen: the
// stop at the breakpoint, a value in the Variables view, Step Back moving the highlighted line
// up (the status bar and the Call Stack saying "◀ reverse"), rewind's Step Into Backwards and
// Step Out Backwards buttons, Reverse Continue going back to the previous hit, the History
// view (Show History on a variable, a click on a change), the Timeline view and the status
// bar, a click on a Timeline event, and the byte code view of a Python frame. Asserts on the DOM; saves a screenshot of each step.
//
// Environment: CODE_SERVER_PREFIX (default build/code-server, made by
// scripts/install-code-server.sh), REWIND_BIN (default build/rewind), SAMPLES_BIN (default
// build/samples), E2E_OUT (default build/vscode-e2e; screenshots under E2E_OUT/screenshots).
'use strict';
const assert = require('assert');
const { execFileSync, spawn } = require('child_process');
const fs = require('fs');
const net = require('net');
const path = require('path');
const { chromium } = require('playwright-core');

const repo = path.resolve(__dirname, '../../..');
const prefix = path.resolve(process.env.CODE_SERVER_PREFIX || path.join(repo, 'build/code-server'));
const rewind = path.resolve(process.env.REWIND_BIN || path.join(repo, 'build/rewind'));
const samplesBin = path.resolve(process.env.SAMPLES_BIN || path.join(repo, 'build/samples'));
const out = path.resolve(process.env.E2E_OUT || path.join(repo, 'build/vscode-e2e'));
const workspace = path.join(repo, 'samples');
const source = path.join(workspace, 'c/crash.c');
const pyScript = path.join(repo, 'tests/programs/nested_calls.py');
const excScript = path.join(repo, 'tests/programs/python_lines/exceptions.py');
const codeServer = path.join(prefix, 'node_modules/.bin/code-server');
const STEP_TIMEOUT = 60000;

let shot = 0;
let page;

function log(msg) {
  console.log(`[${(process.uptime()).toFixed(1)}s] ${msg}`);
}

/** Saves a screenshot named `name` under out/screenshots, numbered in order. */
async function screenshot(name) {
  const file = path.join(out, 'screenshots', `${String(++shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file });
  log(`screenshot ${path.relative(repo, file)}`);
}

function lineOf(file, text) {
  const i = fs.readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes(text));
  if (i < 0) throw new Error(`"${text}" not in ${file}`);
  return i + 1;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function codeServerEnv() {
  return {
    ...process.env,
    XDG_CONFIG_HOME: path.join(out, 'xdg/config'),
    XDG_DATA_HOME: path.join(out, 'xdg/data'),
    XDG_CACHE_HOME: path.join(out, 'xdg/cache'),
    REWIND_TRACE_DIR: path.join(out, 'traces'),
    // Every DAP message of the sessions (rewind dap's message log), shown when a step fails.
    REWIND_DAP_LOG: path.join(out, 'dap.log'),
  };
}

function codeServerArgs() {
  return ['--config', path.join(out, 'config.yaml'), '--user-data-dir', path.join(out, 'user-data'),
    '--extensions-dir', path.join(out, 'extensions')];
}

/** Installs the newest .vsix of vscode-extension/ into a fresh extensions directory. */
function installExtension() {
  const dir = path.join(repo, 'vscode-extension');
  const vsix = fs.readdirSync(dir).filter((f) => /^rewind-debug-.*\.vsix$/.test(f))
    .map((f) => path.join(dir, f)).sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
  if (!vsix) throw new Error('no rewind-debug-*.vsix: run `npm run package` in vscode-extension/ first');
  execFileSync(codeServer, [...codeServerArgs(), '--install-extension', vsix], { env: codeServerEnv(), stdio: 'inherit' });
  const list = execFileSync(codeServer, [...codeServerArgs(), '--list-extensions'], { env: codeServerEnv() }).toString();
  assert.match(list, /rewind\.rewind-debug/, 'the .vsix is installed');
  log(`installed ${path.basename(vsix)}`);
}

function writeSettings() {
  const user = path.join(out, 'user-data/User');
  fs.mkdirSync(user, { recursive: true });
  const settings = {
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'typescript.disableAutomaticTypeAcquisition': true,
    'workbench.startupEditor': 'none',
    'security.workspace.trust.enabled': false,
    'workbench.tips.enabled': false,
    'chat.disableAIFeatures': true,
    'git.openRepositoryInParentFolders': 'never',
    'git.enabled': false,
    // The test opens the repository's samples/: nothing it types may change them.
    'files.readonlyInclude': { '**/*': true },
    'rewind.path': rewind,
    'rewind.timeline.eventCount': 20,
    // The launch configuration lives in the user settings, so that samples/ gets no .vscode/.
    launch: {
      version: '0.2.0',
      configurations: [
        {
          type: 'rewind',
          request: 'launch',
          name: 'rewind: Record & Debug crash',
          program: path.join(samplesBin, 'crash'),
          cwd: '${workspaceFolder}',
        },
        {
          type: 'rewind',
          request: 'launch',
          name: 'rewind: Record & Debug nested_calls.py',
          program: '/usr/bin/python3',
          args: [pyScript],
          interpreterFrames: 'separate',
        },
        {
          type: 'rewind',
          request: 'launch',
          name: 'rewind: Record & Debug nested_calls.py (merged stack)',
          program: '/usr/bin/python3',
          args: [pyScript],
        },
        {
          type: 'rewind',
          request: 'launch',
          name: 'rewind: Record & Debug exceptions.py',
          program: '/usr/bin/python3',
          args: [excScript],
        },
      ],
    },
  };
  fs.writeFileSync(path.join(user, 'settings.json'), JSON.stringify(settings, null, 2));
  // rewind.path is a machine setting: in code-server (a remote window) VS Code reads it from
  // the server machine's settings, not the user's.
  const machine = path.join(out, 'user-data/Machine');
  fs.mkdirSync(machine, { recursive: true });
  fs.writeFileSync(path.join(machine, 'settings.json'), JSON.stringify({ 'rewind.path': rewind }, null, 2));
}

/**
 * Starts code-server on `port` and waits for /healthz. code-server's launcher gives its
 * server process 10 s to start, which a loaded machine (CTest runs recordings beside this
 * test) can miss: then it exits, and is started again, three times at most.
 */
async function startCodeServer(port) {
  for (let attempt = 1; ; attempt++) {
    const logFile = fs.openSync(path.join(out, 'code-server.log'), 'a');
    const child = spawn(codeServer, [...codeServerArgs(), '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none',
      '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', workspace],
    { env: codeServerEnv(), stdio: ['ignore', logFile, logFile], detached: true });
    let exited = false;
    child.on('exit', () => { exited = true; });
    for (let i = 0; i < 240 && !exited; i++) {
      try {
        const r = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (r.ok) return child;
      } catch { /* not up yet */ }
      await new Promise((r) => setTimeout(r, 500));
    }
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    if (attempt === 3) throw new Error('code-server did not start (3 tries; see code-server.log)');
    log(`code-server did not start (try ${attempt}); starting it again`);
  }
}

/**
 * Runs `title` from the command palette (F1). VS Code moves the focus to the editor when
 * the program stops, which can close a palette just opened: then it tries again.
 */
async function runCommand(title) {
  const input = page.locator('.quick-input-widget input');
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('Escape');
    // F1 from the editor; the Command Center (the title bar's search box) from anywhere.
    if (attempt % 2) await page.keyboard.press('F1');
    else await page.locator('.command-center-center').first().click();
    const typed = await input.fill(`>${title}`, { timeout: 5000 }).then(() => true, () => false);
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    const ready = typed && (await row.waitFor({ state: 'visible', timeout: 5000 }).then(() => true, () => false));
    if (ready && (await input.evaluate((e) => e === document.activeElement).catch(() => false))) {
      await page.keyboard.press('Enter');
      return;
    }
    if (attempt === 5) throw new Error(`the command palette did not run "${title}"`);
    await page.waitForTimeout(500);  // let the focus settle (VS Code moves it to the editor at a stop)
  }
}

/** The line numbers of the editor's highlighted current-statement line (the top stack frame). */
async function highlightedLine() {
  return page.evaluate(() => {
    const deco = document.querySelector('.view-overlays .debug-top-stack-frame-line, .view-overlays .debug-focused-stack-frame-line');
    if (!deco) return null;
    const top = deco.parentElement.style.top;
    for (const el of document.querySelectorAll('.margin-view-overlays > div')) {
      const n = el.querySelector('.line-numbers');
      if (el.style.top === top && n) return Number(n.textContent.trim());
    }
    return null;
  });
}

async function waitForHighlightedLine(expected, what) {
  const deadline = Date.now() + STEP_TIMEOUT;
  let seen = null;
  while (Date.now() < deadline) {
    seen = await highlightedLine();
    if (seen === expected) return;
    await page.waitForTimeout(200);
  }
  throw new Error(`${what}: highlighted line is ${seen}, expected ${expected}`);
}

/** The Variables view's rows as name -> value (expanded scopes only). */
async function variables() {
  return page.evaluate(() => {
    const out = {};
    const pane = document.querySelector('.debug-pane .debug-variables') ||
      [...document.querySelectorAll('.pane')].find((p) => /Variables/.test(p.querySelector('.pane-header')?.textContent || ''));
    if (!pane) return out;
    for (const row of pane.querySelectorAll('.monaco-list-row')) {
      const name = row.querySelector('.name')?.textContent?.trim().replace(/\s*[:=]$/, '');
      const value = row.querySelector('.value')?.textContent?.trim();
      if (name && value !== undefined) out[name] = value;
    }
    return out;
  });
}

async function waitForVariable(name, value, what) {
  const deadline = Date.now() + STEP_TIMEOUT;
  let vars = {};
  while (Date.now() < deadline) {
    vars = await variables();
    if (vars[name] === value) return;
    await page.waitForTimeout(200);
  }
  throw new Error(`${what}: Variables view shows ${name} = ${vars[name]}, expected ${value} (${JSON.stringify(vars)})`);
}

/** Goes to line `line` of the active editor (Go to Line) and toggles a breakpoint there (F9). */
async function toggleBreakpointAt(line) {
  await page.locator('.monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+G');
  await page.locator('.quick-input-widget input').fill(`:${line}`);
  await page.keyboard.press('Enter');
  await page.keyboard.press('F9');
}

async function clickDebugButton(label) {
  const button = page.locator(`.debug-toolbar .action-item a[aria-label^="${label}"], .debug-toolbar .action-item [aria-label^="${label}"]`).first();
  await button.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  // Just after a stop VS Code may still show a button disabled (its debugState context
  // follows the stop a moment later): a click then does nothing. Wait until it is enabled.
  const deadline = Date.now() + STEP_TIMEOUT;
  while (Date.now() < deadline &&
         await button.evaluate((b) => b.classList.contains('disabled') || b.getAttribute('aria-disabled') === 'true'))
    await page.waitForTimeout(100);
  await button.click();
}

/** Stops the session with Shift+F5, as a user would; the extension then hides its status bar item. */
async function stopDebugging() {
  await page.keyboard.press('Escape');
  await page.keyboard.press('Shift+F5');
  for (let i = 0; i < 300 && (await statusBarText()) !== null; i++) await page.waitForTimeout(200);
  assert.strictEqual(await statusBarText(), null, 'the session ended');
  // And stays hidden: an answer to a request made before the end must not bring it back.
  await page.waitForTimeout(1500);
  assert.strictEqual(await statusBarText(), null, 'the status bar stays hidden after the session ended');
}

/** Waits until the status bar item's text matches `re`. */
async function waitForStatus(re, what) {
  for (let i = 0; i < 300 && !re.test((await statusBarText()) ?? ''); i++) await page.waitForTimeout(200);
  assert.match((await statusBarText()) ?? '', re, what);
}

async function statusBarText() {
  return page.evaluate(() => {
    const item = [...document.querySelectorAll('.statusbar-item')].find((e) => /event \d+ \/ \d+/.test(e.textContent));
    return item ? item.textContent.trim() : null;
  });
}

async function main() {
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(path.join(out, 'screenshots'), { recursive: true });
  fs.mkdirSync(path.join(out, 'traces'), { recursive: true });
  for (const p of [codeServer, rewind, path.join(samplesBin, 'crash'), '/usr/bin/chromium'])
    if (!fs.existsSync(p)) throw new Error(`missing ${p} (scripts/install-code-server.sh installs code-server and chromium; scripts/build.sh builds rewind and the samples)`);
  const bpLine = lineOf(source, 'total += it->value;');
  const printLine = lineOf(source, 'printf("%s\\n", it->name);');
  installExtension();
  writeSettings();
  const port = await freePort();
  const server = await startCodeServer(port);
  log(`code-server on port ${port}`);
  const browser = await chromium.launchPersistentContext(path.join(out, 'chromium-profile'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1600, height: 1000 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  try {
    page = browser.pages()[0] || (await browser.newPage());
    page.setDefaultTimeout(STEP_TIMEOUT);
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator('.monaco-workbench').waitFor();
    await page.locator('.explorer-folders-view, .explorer-viewlet').first().waitFor();
    log('workbench loaded');

    // Open crash.c and set a breakpoint on `total += it->value;`.
    await page.keyboard.press('Control+P');
    await page.locator('.quick-input-widget input').fill('crash.c');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'crash.c' }).first().waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.tab', { hasText: 'crash.c' }).waitFor();
    await toggleBreakpointAt(bpLine);
    await page.locator('.codicon-debug-breakpoint, .codicon-debug-breakpoint-unverified').first().waitFor();
    await screenshot('breakpoint-set');

    // Start "rewind: Record & Debug" and stop at the breakpoint (first iteration: total is 0).
    await runCommand('Debug: Select and Start Debugging');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'rewind: Record & Debug crash' }).first().click();
    log('started rewind: Record & Debug crash');
    await waitForHighlightedLine(bpLine, 'stop at the breakpoint');
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'main' }).first().waitFor();
    await waitForVariable('i', '0', 'first stop');
    await waitForVariable('total', '0', 'first stop');
    await screenshot('stopped-at-breakpoint');

    // Continue to the second hit: i = 1, total = 3 (apples).
    await clickDebugButton('Continue');
    await waitForVariable('i', '1', 'second hit');
    await waitForHighlightedLine(bpLine, 'second hit');
    await waitForVariable('total', '3', 'second hit');
    await screenshot('second-hit');

    // Step Back: the highlighted line moves up to the printf before it, and the status bar
    // says the last move went backwards (VS Code itself shows no sign of it).
    await clickDebugButton('Step Back');
    await waitForHighlightedLine(printLine, 'step back');
    await waitForVariable('i', '1', 'step back');
    await waitForStatus(/^◀ reverse · event \d+ \/ \d+$/, 'the status bar after Step Back');
    // The Call Stack's header shows the stopped event's description: the direction too.
    await page.locator('.pane-header', { hasText: /Call Stack.*◀ reverse/ }).first().waitFor();
    // VS Code loads the frames below the top one 420 ms after the stop; once it has, the
    // Call Stack offers no "Load More Stack Frames" (the whole stack is there).
    await page.waitForTimeout(1500);
    const stackRows = await page.locator('.debug-call-stack .monaco-list-row').allTextContents();
    assert.ok(!stackRows.some((t) => /Load More Stack Frames/i.test(t)),
      `the whole stack is shown after Step Back: ${JSON.stringify(stackRows)}`);
    await screenshot('step-back');

    // Step Over, forwards again: the status bar drops the mark. Then rewind's own buttons:
    // Step Into Backwards goes into the last line of puts (gcc's printf of a plain string; libc, no source here), Step Out
    // Backwards comes back to the call in main, before it ran.
    await clickDebugButton('Step Over');
    await waitForHighlightedLine(bpLine, 'step over');
    await waitForStatus(/^event \d+ \/ \d+$/, 'the status bar after Step Over');
    await clickDebugButton('Step Into Backwards');
    await page.locator('.debug-call-stack .monaco-list-row', { hasText: /puts/ }).first().waitFor();
    await waitForStatus(/^◀ reverse · event \d+ \/ \d+$/, 'the status bar after Step Into Backwards');
    await screenshot('step-into-backwards');
    await clickDebugButton('Step Out Backwards');
    await waitForHighlightedLine(printLine, 'step out backwards');
    await waitForVariable('i', '1', 'step out backwards');
    await screenshot('step-out-backwards');

    // Reverse Continue: back to the previous hit of the breakpoint (i = 0).
    await clickDebugButton('Reverse');  // VS Code labels Reverse Continue "Reverse"
    await waitForHighlightedLine(bpLine, 'reverse continue');
    await waitForVariable('i', '0', 'reverse continue');
    await waitForVariable('total', '0', 'reverse continue');
    await screenshot('reverse-continue');

    // The History view: "Show History" on `total` in the Variables view lists each change of
    // it over the whole recording (apples 3, pears 5, plums 7 added), without moving; a click
    // on a row goes to that write.
    const totalRow = page.locator('.debug-pane .debug-variables .monaco-list-row, .pane .monaco-list-row', { hasText: /^total/ }).first();
    await totalRow.click({ button: 'right' });
    // (A monaco menu acts on the item under the mouse at Enter; a synthetic click on it can
    // leave the menu open.)
    await page.locator('.context-view .action-item', { hasText: 'Show History' }).first().hover();
    await page.keyboard.press('Enter');
    const historyPane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /rewind History/i }) });
    await historyPane.locator('.monaco-list-row', { hasText: '→ 15' }).first().waitFor({ timeout: STEP_TIMEOUT });
    const changes = await historyPane.locator('.monaco-list-row').allTextContents();
    log(`history: ${JSON.stringify(changes)}`);
    const values = changes.map((t) => (/→ (\d+)/.exec(t) || [])[1]).filter((v) => v !== undefined);
    assert.deepStrictEqual(values.slice(-3), ['3', '8', '15'], `the changes of total: ${JSON.stringify(changes)}`);
    assert.match(await historyPane.locator('.pane-header').textContent(), /History of total, a local of main: \d+ changes?/);
    await waitForVariable('total', '0', 'the query did not move the session');
    await screenshot('history-view');
    await historyPane.locator('.monaco-list-row', { hasText: '3 → 8' }).first().click();
    await waitForVariable('total', '8', 'a click on a change of the History view');
    await waitForVariable('i', '1', 'a click on a change of the History view');
    await screenshot('history-goto');

    // The Timeline view lists the recorded events, the current one marked; the status bar
    // says where the replay stands.
    // Room for the Timeline: fold the Variables, Watch and Call Stack views.
    for (const title of ['Variables', 'Watch', 'Call Stack', 'Loaded Scripts'])
      await page.locator('.pane-header[aria-expanded="true"]', { hasText: new RegExp(`^${title}`, 'i') }).first()
        .click({ timeout: 5000 }).catch(() => {});
    await runCommand('rewind: Show Timeline');
    const timeline = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /rewind Timeline/i }) });
    const rows = timeline.locator('.monaco-list-row');
    await rows.filter({ hasText: 'current' }).first().waitFor();
    const texts = await rows.allTextContents();
    log(`timeline: ${texts.length} rows, e.g. ${JSON.stringify(texts.slice(0, 3))}`);
    assert.ok(texts.some((t) => /write = \d+ \[stdout\]/.test(t)), `the timeline lists the program's writes: ${JSON.stringify(texts)}`);
    const current = texts.filter((t) => /current/.test(t));
    assert.strictEqual(current.length, 1, `one current event: ${JSON.stringify(current)}`);
    // rewind's own events (its preload library's set-up) are not listed.
    assert.ok(!texts.some((t) => /rewind_register_buffer|perf_event_open/.test(t)),
      `rewind's own events are hidden: ${JSON.stringify(texts)}`);
    const status = await statusBarText();
    assert.ok(status, 'a status bar item shows the current event');
    const [, event, count] = /event (\d+) \/ (\d+)/.exec(status).map(Number);
    assert.ok(event >= 1 && event < count, status);
    assert.match(current[0], new RegExp(`#${event}\\b`), 'the timeline marks the status bar\'s event');
    await screenshot('timeline');

    // A click on the program's first write goes there: the status bar follows, and the
    // stack shows the replay stopped inside that write.
    const writeRow = rows.filter({ hasText: /write = \d+ \[stdout\]/ }).first();
    const writeEvent = Number(/#(\d+)/.exec(await writeRow.textContent())[1]);
    await writeRow.click();
    const atWrite = `${writeEvent < event ? '◀ reverse · ' : ''}event ${writeEvent} / ${count}`;
    const deadline = Date.now() + STEP_TIMEOUT;
    while (Date.now() < deadline && (await statusBarText()) !== atWrite) await page.waitForTimeout(200);
    assert.strictEqual(await statusBarText(), atWrite, 'the status bar after a timeline click');
    await rows.filter({ hasText: new RegExp(`#${writeEvent}\\b.*current`) }).first().waitFor();
    const title = timeline.locator('.pane-header');
    for (let i = 0; i < 50 && !(await title.textContent()).includes(`event ${writeEvent} / ${count}`); i++)
      await page.waitForTimeout(100);
    assert.match(await title.textContent(), new RegExp(`event ${writeEvent} / ${count}`), 'the Timeline title says where the replay is');
    await screenshot('timeline-seek');

    // rewind: Add Checkpoint keeps one here: a notification says so, the Timeline marks it.
    await runCommand('rewind: Add Checkpoint');
    await page.locator('.notification-toast', { hasText: `checkpoint 1 at event ${writeEvent}` }).first().waitFor();
    await rows.filter({ hasText: new RegExp(`#${writeEvent}\\b.*checkpoint 1`) }).first().waitFor();
    // rewind: Go to Event… takes an event number; the status bar follows.
    await runCommand('rewind: Go to Event…');
    await page.locator('.quick-input-widget input').fill('5');
    await page.keyboard.press('Enter');
    const at5 = `${5 < writeEvent ? '◀ reverse · ' : ''}event 5 / ${count}`;
    for (let i = 0; i < 300 && (await statusBarText()) !== at5; i++) await page.waitForTimeout(200);
    assert.strictEqual(await statusBarText(), at5, 'the status bar after Go to Event 5');
    // Event 5 is the dynamic loader's: the Timeline folds the start-up into one group, open
    // around the current event.
    await rows.filter({ hasText: /#5\b.*current/ }).first().waitFor();
    const startup = rows.filter({ hasText: /start-up: the dynamic loader/ }).first();
    await startup.waitFor();
    assert.strictEqual(await startup.getAttribute('aria-expanded'), 'true', 'the start-up group holding event 5 is open');
    assert.match(await startup.textContent(), /#2–#\d+ · \d+ events/, 'the group says which events it holds');
    await screenshot('checkpoint-and-go-to-event');

    // Restart: VS Code clears the Debug Console first; the recording's output comes back,
    // under a heading that says it is the recording's. The program was rebuilt meanwhile
    // (its file's time changed, as a build changes it): a notification offers Record Again,
    // which records it anew (the next trace, crash-1) and stops at the breakpoint again.
    const crashBinary = path.join(samplesBin, 'crash');
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(crashBinary, later, later);
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+Shift+F5');  // Restart
    const consoleRows = page.locator('.repl .monaco-list-row');
    await consoleRows.filter({ hasText: /rewind: the output of the recording of .*crash/ }).first().waitFor();
    await consoleRows.filter({ hasText: /plums/ }).first().waitFor();  // printed before the crash, if any
    log('the recording\'s output is in the Debug Console again after Restart');
    const changed = page.locator('.notification-toast', { hasText: /has changed since it was recorded/ }).first();
    await changed.waitFor();
    await screenshot('restart-program-changed');
    await changed.locator('.monaco-button', { hasText: 'Record Again' }).click();
    await consoleRows.filter({ hasText: /recorded .*crash-1; now debugging its replay/ }).first().waitFor({ timeout: 120000 });
    await waitForHighlightedLine(bpLine, 'the stop after Record Again');
    await waitForStatus(/^event \d+ \/ \d+$/, 'the status bar of the new recording');
    assert.strictEqual(await page.locator('.debug-toolbar .monaco-select-box').count(), 0,
      'one debug session: the old one ended before the new recording started');
    await screenshot('record-again');

    await stopDebugging();

    // rewind: Open Trace… lists the recorded traces, the latest first; picking the one just
    // recorded replays it, to the breakpoint's first hit.
    await runCommand('rewind: Open Trace…');
    const traceRow = page.locator('.quick-input-list .monaco-list-row', { hasText: 'crash-1' }).first();
    await traceRow.waitFor();
    const picked = /latest · (\d+) events/.exec(await traceRow.textContent());
    assert.ok(picked, 'the picker describes the trace');
    const pickedCount = Number(picked[1]);  // crash-1's: its run may have crashed, unlike crash-0's
    await screenshot('open-trace-picker');
    await traceRow.click();
    await waitForHighlightedLine(bpLine, 'the replay started by Open Trace');
    // The status bar follows the new session too (the picked recording's event count).
    for (let i = 0; i < 300 && !new RegExp(`^event \\d+ / ${pickedCount}$`).test((await statusBarText()) ?? ''); i++) await page.waitForTimeout(200);
    assert.match((await statusBarText()) ?? '', new RegExp(`^event \\d+ / ${pickedCount}$`), 'the status bar of the replay started by Open Trace');
    await screenshot('open-trace-replay');
    await stopDebugging();

    // A Python program with "interpreterFrames": "separate": the Python/R Stack view lists the
    // script's frames at a function breakpoint on clock_nanosleep (time.sleep), with locals,
    // and a click opens the script at the frame's line.
    await runCommand('Add Function Breakpoint');
    await page.waitForFunction(() => document.activeElement?.tagName === 'INPUT' &&
      !!document.activeElement.closest('.pane-body'));  // the Breakpoints view's name box
    await page.keyboard.type('clock_nanosleep');
    await page.keyboard.press('Enter');
    await runCommand('Debug: Select and Start Debugging');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'rewind: Record & Debug nested_calls.py' }).first().click();
    const pyPane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /Python\/R Stack/i }) });
    const pyHeader = pyPane.locator('.pane-header').first();
    await pyHeader.waitFor({ timeout: 120000 });
    if ((await pyHeader.getAttribute('aria-expanded')) !== 'true') await pyHeader.click();
    const pyRows = pyPane.locator('.monaco-list-row');
    const sleepLine = lineOf(pyScript, 'time.sleep(0.001)');
    await pyRows.filter({ hasText: `nested_calls.py:${sleepLine}` }).first().waitFor({ timeout: 120000 });
    const frames = await pyRows.allTextContents();
    log(`Python/R Stack: ${JSON.stringify(frames)}`);
    assert.match(frames[0], new RegExp(`^Pipeline\\.stage\\s*nested_calls\\.py:${sleepLine}$`), 'the innermost frame');
    assert.ok(frames.some((f) => /^main\s*nested_calls\.py:/.test(f)), 'main is on the stack');
    await pyRows.first().click();  // opens the script at the frame's line
    await page.locator('.pane-header[aria-expanded="true"]', { hasText: /rewind Timeline/i }).first().click();
    // The frame's locals: expand the row (unless the click above already did) and see that
    // it stays expanded.
    const innermost = pyRows.first();
    const expandedByClick = (await innermost.getAttribute('aria-expanded')) === 'true';
    log(`innermost frame expanded by the click that opened it: ${expandedByClick}`);
    const expandedRow = pyPane.locator('.monaco-list-row[aria-expanded="true"]').first();
    // A click on the twistie while the views are still laid out again (the Timeline folded
    // just above) can be lost: no request for the frame's locals follows (a CI run waited
    // 60 s on a row never expanded). It is clicked again then, up to three times.
    for (let i = 0; !expandedByClick && i < 3; i++) {
      await innermost.locator('.monaco-tl-twistie').click();
      try {
        await expandedRow.waitFor({ timeout: 10000 });
        break;
      } catch {
        log(`innermost frame not expanded by twistie click ${i + 1}`);
      }
    }
    await expandedRow.waitFor();
    await pyRows.filter({ hasText: /^word\s*'héllo'/ }).first().waitFor();
    await pyRows.filter({ hasText: /^depth\s*0$/ }).first().waitFor();
    await page.locator('.tab', { hasText: 'nested_calls.py' }).waitFor();
    await screenshot('python-stack');
    await stopDebugging();

    // A gutter breakpoint in the Python script (F9 on `big = 2**70 + 5`, which runs before
    // time.sleep): Record & Debug stops there, the script's line highlighted, its locals in
    // the Variables view.
    const bigLine = lineOf(pyScript, 'big = 2**70 + 5');
    await page.locator('.tab', { hasText: 'nested_calls.py' }).click();
    await toggleBreakpointAt(bigLine);
    await runCommand('Debug: Select and Start Debugging');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'rewind: Record & Debug nested_calls.py (merged stack)' }).first().click();
    log('started rewind: Record & Debug nested_calls.py (merged stack)');
    if (process.env.REWIND_DEBUG_REGISTERS === 'no') {
      // No debug registers for programs here (a PVM guest: `rewind machine` says so): rewind
      // refuses Python breakpoints with the reason. The gutter shows the breakpoint unverified,
      // and the run goes past its line to the native breakpoint in time.sleep.
      await page.locator('.codicon-debug-breakpoint-unverified').first().waitFor({ timeout: STEP_TIMEOUT });
      await waitForHighlightedLine(sleepLine, 'past the refused Python breakpoint');
      await screenshot('python-breakpoint-refused');
      await stopDebugging();
      log('the Python breakpoint was refused (no debug registers here): its stop, locals and byte code view are not checked');
    } else {
      await waitForHighlightedLine(bigLine, 'stop at the Python breakpoint');
      // Unfold the views folded for the Timeline above.
      for (const title of ['Variables', 'Call Stack'])
        await page.locator('.pane-header[aria-expanded="false"]', { hasText: new RegExp(`^${title}`, 'i') }).first()
          .click({ timeout: 5000 }).catch(() => {});
      await page.locator('.debug-call-stack .monaco-list-row', { hasText: 'Pipeline.stage' }).first().waitFor();
      await waitForVariable('depth', '0', 'the Python breakpoint');
      await waitForVariable('label', "'axxx'", 'the Python breakpoint');
      await screenshot('python-breakpoint');
      // rewind: Show Byte Code on the selected (top) frame: a read-only document of the frame's
      // bytecode opens, the instruction it stands at marked "=>" and in view.
      await runCommand('rewind: Show Byte Code');
      await page.locator('.tab', { hasText: /Pipeline\.stage \(CPython 3\.[0-9.]+ bytecode/ }).first()
        .waitFor({ timeout: STEP_TIMEOUT });
      const codeLines = page.locator('.editor-group-container.active .monaco-editor .view-lines').first();
      await page.waitForFunction((el) => /=>/.test(el.textContent ?? ''), await codeLines.elementHandle(),
        { timeout: STEP_TIMEOUT });
      const codeText = await codeLines.textContent();
      log(`byte code view: ${codeText.slice(0, 200)}`);
      assert.match(codeText, new RegExp(`=>\\s*${bigLine}\\s+\\d+\\s+[A-Z_]+`), 'the current instruction, on the breakpoint\'s line');
      await screenshot('python-byte-code');
      await stopDebugging();
    }

    // Python exceptions with the default filters (Python: uncaught exceptions on): Record &
    // Debug of exceptions.py stops where the worker thread's uncaught KeyError was raised, the
    // exception widget saying so; Continue goes on to the program's own uncaught RuntimeError,
    // and Reverse Continue back to the KeyError.
    const lookupLine = lineOf(excScript, 'return table[key]  # lookup line');
    const failLine = lineOf(excScript, '# uncaught raise line');
    await runCommand('Debug: Select and Start Debugging');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'rewind: Record & Debug exceptions.py' }).first().click();
    log('started rewind: Record & Debug exceptions.py');
    await waitForHighlightedLine(lookupLine, 'the uncaught KeyError raised in the worker thread');
    const widget = page.locator('.exception-widget');
    await widget.filter({ hasText: 'KeyError' }).first().waitFor({ timeout: STEP_TIMEOUT });
    assert.match(await widget.first().textContent(), /'missing'/, 'the exception widget shows the message');
    await screenshot('python-uncaught-exception');
    await clickDebugButton('Continue');
    await waitForHighlightedLine(failLine, 'the uncaught RuntimeError');
    await widget.filter({ hasText: 'RuntimeError' }).first().waitFor({ timeout: STEP_TIMEOUT });
    assert.match(await widget.first().textContent(), /gave up after 3/, 'the exception widget shows the message');
    await clickDebugButton('Reverse');
    await waitForHighlightedLine(lookupLine, 'Reverse Continue back to the KeyError');
    await stopDebugging();
    log('PASS: stop at breakpoint, Variables, Step Back, Reverse Continue, History view, Timeline, status bar, seek, checkpoint, go to event, restart and record again, open trace, Python/R Stack, Python breakpoint, byte code view, Python exceptions');
  } catch (e) {
    await screenshot('failure').catch(() => {});
    // What the side bar's views showed, for a failure seen only in a CI log.
    const panes = await page.locator('.pane').evaluateAll((els) => els.map((el) => {
      const header = el.querySelector('.pane-header')?.textContent ?? '';
      const rows = [...el.querySelectorAll('.monaco-list-row')].map((r) =>
        `${r.getAttribute('aria-expanded') === 'true' ? 'v ' : ''}${r.textContent}`);
      return `${header}: ${JSON.stringify(rows)}`;
    })).catch(() => []);
    for (const p of panes) log(`pane ${p}`);
    throw e;
  } finally {
    await browser.close();
    try { process.kill(-server.pid, 'SIGTERM'); } catch { /* gone */ }
  }
}

main().catch((e) => {
  console.error(`vscode e2e: FAIL: ${e.message}`);
  const logFile = path.join(out, 'code-server.log');
  if (fs.existsSync(logFile)) console.error(fs.readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n'));
  // The last DAP messages, each cut to 400 characters (the whole log stays in E2E_OUT).
  const dapLog = path.join(out, 'dap.log');
  if (fs.existsSync(dapLog)) {
    console.error(`last DAP messages (all in ${dapLog}):`);
    console.error(fs.readFileSync(dapLog, 'utf8').split('\n').slice(-60).map((l) => l.slice(0, 400)).join('\n'));
  }
  process.exit(1);
});
