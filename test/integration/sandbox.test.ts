import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import { call, connectToFirstFolder, folder } from './helpers';

interface Info {
  execution: { isolation: { command_sandbox: { enabled: boolean; kind: string; reason?: string } }; network: string };
}

/**
 * The command sandbox as users get it: the extension reads codespace.exec.isolation (default `auto`) and this
 * machine has bubblewrap (CI installs it), so agents' commands run in bwrap.
 */
describe('Command sandbox inside VS Code', () => {
  let client: Client;
  let wsId: string;

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
  });

  after(async () => {
    await client?.close();
  });

  it('workspace_info reports bubblewrap with the network blocked', async () => {
    const info = await call<Info>(client, 'workspace_info', { workspace_id: wsId });
    assert.deepEqual(info.execution.isolation.command_sandbox, { enabled: true, kind: 'bubblewrap' }, JSON.stringify(info.execution));
    assert.equal(info.execution.network, 'blocked');
  });

  it('a command cannot write .vscode/x, but can write elsewhere in the folder', async () => {
    const root = folder(0).uri.fsPath;
    const name = `sandbox-${Date.now()}`;
    const { process_id } = await call<{ process_id: string }>(client, 'exec_command', {
      workspace_id: wsId,
      command: ['sh', '-c', `mkdir -p .vscode 2>/dev/null; echo evil > .vscode/${name} && echo WROTE-VSCODE; echo ok > ${name}.txt && echo WROTE-ROOT`],
      occupancy: 'shared',
    });
    let cursor = 0;
    let out = '';
    for (let i = 0; i < 100; i++) {
      const r = await call<{ chunk: string; cursor: number; eof: boolean }>(client, 'read_process', { process_id, cursor, wait_ms: 1000 });
      out += r.chunk;
      cursor = r.cursor;
      if (r.eof) break;
    }
    assert.doesNotMatch(out, /WROTE-VSCODE/);
    assert.match(out, /WROTE-ROOT/);
    assert.equal(fs.existsSync(path.join(root, '.vscode', name)), false);
    assert.equal(fs.readFileSync(path.join(root, `${name}.txt`), 'utf8'), 'ok\n');
    fs.rmSync(path.join(root, `${name}.txt`), { force: true });
  });

  it("a sandboxed command cannot connect to VS Code's own IPC sockets, which the extension host itself reaches", async function () {
    this.timeout(120_000);
    // The CLI socket (open, openExternal, extension installs) and the extension host's other IPC sockets.
    const candidates = new Set<string>();
    for (const v of ['VSCODE_IPC_HOOK_CLI', 'VSCODE_IPC_HOOK', 'VSCODE_GIT_IPC_HANDLE']) if (process.env[v]) candidates.add(process.env[v] as string);
    for (const dir of [os.tmpdir(), process.env.XDG_RUNTIME_DIR]) {
      if (!dir) continue;
      for (const n of fs.existsSync(dir) ? fs.readdirSync(dir) : []) if (/^vscode-(ipc|git)-.*\.sock$/.test(n)) candidates.add(path.join(dir, n));
    }
    const sockets = [...candidates].filter((p) => fs.existsSync(p) && fs.statSync(p).isSocket());
    // The control: from the extension host they answer (the socket is live, not a leftover).
    const live: string[] = [];
    for (const p of sockets) if (await connects(p)) live.push(p);
    assert.ok(live.length > 0, `no live VS Code IPC socket found (looked at ${[...candidates].join(', ') || 'nothing'})`);
    assert.ok(live.includes(process.env.VSCODE_IPC_HOOK_CLI ?? '') || live.some((p) => /vscode-ipc-/.test(path.basename(p))), live.join(', '));
    const info = await call<{ execution: { isolation: { unix_sockets?: unknown } } }>(client, 'workspace_info', { workspace_id: wsId });
    assert.deepEqual(info.execution.isolation.unix_sockets, { blocked: true, method: 'seccomp' });
    const root = folder(0).uri.fsPath;
    const script = `ipc-client-${Date.now()}.js`;
    fs.writeFileSync(
      path.join(root, script),
      "const net = require('node:net');\n(async () => { for (const t of process.argv.slice(2)) console.log(t + ' ' + await new Promise((r) => { const s = net.connect(t); s.on('connect', () => { s.end(); r('CONNECTED'); }); s.on('error', (e) => r('ERROR ' + e.code)); })); })();\n",
    );
    const unixSockets = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('codespace');
    try {
      const out = (await run([sandboxNode(), script, ...live])).replace(/\r\n/g, '\n');
      console.log(`      tried from the sandbox: ${out.trim().split('\n').join('; ')}`);
      for (const p of live) assert.match(out, new RegExp(`^${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} ERROR EPERM$`, 'm'), out);
      assert.doesNotMatch(out, /CONNECTED/);
      // The weaker mode reaches the sandbox too (in the process host): no filter, so no EPERM, only the file system's answer.
      await unixSockets().update('exec.unixSockets', 'allow', vscode.ConfigurationTarget.Global);
      const weaker = await call<{ execution: { isolation: { unix_sockets?: { blocked: boolean } } } }>(client, 'workspace_info', { workspace_id: wsId });
      assert.equal(weaker.execution.isolation.unix_sockets?.blocked, false);
      const unfiltered = await run([sandboxNode(), script, ...live]);
      console.log(`      with codespace.exec.unixSockets "allow": ${unfiltered.trim().split(/\r?\n/).join('; ')}`);
      assert.doesNotMatch(unfiltered, /EPERM/);
    } finally {
      await unixSockets().update('exec.unixSockets', undefined, vscode.ConfigurationTarget.Global);
      fs.rmSync(path.join(root, script), { force: true });
    }
  });

  /**
   * A node the sandboxed command can start: the extension host's own, unless it lives under the temporary folder
   * (a checkout under /tmp), which the sandbox replaces with a private one; then the first node on PATH outside it.
   */
  function sandboxNode(): string {
    const tmp = fs.realpathSync(os.tmpdir()) + path.sep;
    const outsideTmp = (p: string): boolean => !fs.realpathSync(p).startsWith(tmp);
    if (outsideTmp(process.execPath)) return process.execPath;
    for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
      const candidate = path.join(dir, 'node');
      if (dir && fs.existsSync(candidate) && outsideTmp(candidate)) return candidate;
    }
    return process.execPath;
  }

  function connects(p: string): Promise<boolean> {
    return new Promise((resolve) => {
      const s = net.connect(p);
      s.on('connect', () => {
        s.end();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
  }

  /** The parts of the built-in git extension's API (v1) this test uses. */
  interface GitApi {
    openRepository(root: vscode.Uri): Promise<{ status(): Promise<void>; rootUri: vscode.Uri } | null>;
    readonly repositories: readonly { readonly rootUri: vscode.Uri }[];
  }

  async function run(command: string[]): Promise<string> {
    const { process_id } = await call<{ process_id: string }>(client, 'exec_command', { workspace_id: wsId, command, occupancy: 'shared' });
    let cursor = 0;
    let out = '';
    for (let i = 0; i < 120; i++) {
      const r = await call<{ chunk: string; cursor: number; eof: boolean }>(client, 'read_process', { process_id, cursor, wait_ms: 1000 });
      out += r.chunk;
      cursor = r.cursor;
      if (r.eof) return out;
    }
    throw new Error(`the command did not end: ${out}`);
  }

  function repo(dir: string): void {
    const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
    for (const args of [['init', '-q', dir], ['-C', dir, 'commit', '-q', '--allow-empty', '-m', 'first']]) {
      const r = spawnSync('git', args, { encoding: 'utf8', env });
      assert.equal(r.status, 0, r.stderr);
    }
  }

  it("VS Code's git extension runs nothing a sandboxed command planted (core.fsmonitor, directly and through commondir)", async function () {
    this.timeout(120_000);
    const root = folder(0).uri.fsPath;
    const stamp = `${Date.now()}`;
    const probe = path.join(root, `gitprobe-${stamp}`);
    const control = path.join(root, `gitcontrol-${stamp}`);
    const marker = path.join(root, `PWNED-${stamp}`);
    const controlMarker = path.join(root, `CONTROL-${stamp}`);
    const gitExt = vscode.extensions.getExtension<{ getAPI(v: 1): GitApi }>('vscode.git');
    assert.ok(gitExt, 'the built-in git extension is present');
    const git = (await gitExt.activate()).getAPI(1);
    try {
      repo(probe);
      repo(control);
      const name = path.basename(probe);
      const out = await run([
        'sh',
        '-c',
        [
          `(printf '[core]\\n\\tfsmonitor = "touch ${marker}"\\n' >> ${name}/.git/config) 2>/dev/null && echo PLANTED-config`,
          `(mkdir -p evil-${stamp} && cp -r ${name}/.git/objects ${name}/.git/refs evil-${stamp}/ && printf '[core]\\n\\tfsmonitor = "touch ${marker}"\\n' > evil-${stamp}/config && echo ../../evil-${stamp} > ${name}/.git/commondir) 2>/dev/null && echo PLANTED-commondir`,
          'echo done',
        ].join('; '),
      ]);
      assert.match(out, /done/);
      assert.doesNotMatch(out, /PLANTED/);
      // The control: the same configuration written outside the sandbox does run, so the extension did act.
      fs.appendFileSync(path.join(control, '.git', 'config'), `[core]\n\tfsmonitor = "touch ${controlMarker}"\n`);
      for (const dir of [probe, control]) {
        const r = await git.openRepository(vscode.Uri.file(dir));
        assert.ok(r, `git opened ${dir}`);
        await r.status();
      }
      await vscode.commands.executeCommand('git.refresh');
      assert.equal(fs.existsSync(controlMarker), true, 'the control repository\'s fsmonitor did not run: the git extension did not act');
      assert.equal(fs.existsSync(marker), false, 'a command planted by the sandboxed command ran outside the sandbox');
    } finally {
      for (const p of [probe, control, marker, controlMarker, path.join(root, `evil-${stamp}`)]) fs.rmSync(p, { recursive: true, force: true });
    }
  });

  describe('a repository a sandboxed command creates, with default settings', () => {
    /** How long the git extension gets to notice a new repository (its watcher waits 500 ms, then opens and runs status). */
    const NOTICE_MS = 15_000;
    let git: GitApi;
    let root: string;
    let stamp: string;
    let marker: string;
    const made: string[] = [];

    before(async () => {
      const gitExt = vscode.extensions.getExtension<{ getAPI(v: 1): GitApi }>('vscode.git');
      assert.ok(gitExt, 'the built-in git extension is present');
      git = (await gitExt.activate()).getAPI(1);
    });

    beforeEach(() => {
      root = folder(0).uri.fsPath;
      stamp = `${Date.now()}`;
      // Outside the workspace, where only something running outside the sandbox can write.
      marker = path.join(os.tmpdir(), `codespace-newrepo-${stamp}`);
      made.push(marker);
    });

    afterEach(async () => {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      for (const p of made.splice(0)) fs.rmSync(p, { recursive: true, force: true });
    });

    /** Shell lines (in the sandbox) making `dir` a repository whose core.fsmonitor touches the marker, committed and changed. */
    function plant(dir: string, init: string): string {
      return [
        `${init}`,
        `printf '#!/bin/sh\\ntouch ${marker}\\n' > ${dir}/hook.sh && chmod +x ${dir}/hook.sh`,
        `git -C ${dir} config core.fsmonitor "$PWD/${dir}/hook.sh"`,
        `echo a > ${dir}/f.txt && git -C ${dir} add f.txt && git -C ${dir} -c user.name=a -c user.email=a@a commit -q -m a`,
        `echo b >> ${dir}/f.txt && echo PLANTED`,
      ].join(' && ');
    }

    /**
     * Runs `script` sandboxed, opens the new repository's file in an editor (as a review or an agent's open_file does),
     * and waits for the git extension to notice: it must not open `repo`, and the marker must never appear.
     */
    async function plantAndWatch(script: string, repo: string): Promise<void> {
      const out = await run(['sh', '-c', script]);
      assert.match(out, /PLANTED/, out);
      await vscode.window.showTextDocument(vscode.Uri.file(path.join(repo, 'f.txt')));
      const deadline = Date.now() + NOTICE_MS;
      while (Date.now() < deadline && !fs.existsSync(marker)) {
        assert.equal(git.repositories.some((r) => r.rootUri.fsPath === repo), false, `the git extension opened ${repo}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal(fs.existsSync(marker), false, "the new repository's core.fsmonitor ran outside the sandbox");
    }

    it('git init sub with core.fsmonitor: the editor\'s git neither opens it nor runs it', async function () {
      this.timeout(120_000);
      const name = `newrepo-${stamp}`;
      made.push(path.join(root, name));
      await plantAndWatch(plant(name, `git init -q ${name}`), path.join(root, name));
    });

    it('a .git file whose gitdir names a folder the command made: not opened, not run', async function () {
      this.timeout(120_000);
      const name = `gitfile-${stamp}`;
      made.push(path.join(root, name), path.join(root, `store-${stamp}`));
      await plantAndWatch(plant(name, `git init -q --separate-git-dir "$PWD/store-${stamp}" ${name} && head -c 7 ${name}/.git | grep -q gitdir`), path.join(root, name));
    });

    it('a submodule the command lists in .gitmodules of a repository the editor has open: not opened, not run', async function () {
      this.timeout(120_000);
      const parent = path.join(root, `parent-${stamp}`);
      made.push(parent);
      repo(parent);
      assert.ok(await git.openRepository(vscode.Uri.file(parent)), 'the developer\'s repository is open');
      const sub = `parent-${stamp}/mod`;
      const gitmodules = `printf '[submodule "mod"]\\n\\tpath = mod\\n\\turl = ./mod\\n' > parent-${stamp}/.gitmodules`;
      await plantAndWatch(`${gitmodules} && ${plant(sub, `git init -q ${sub}`)}`, path.join(root, sub));
    });

    it('control: a repository the developer opens runs its core.fsmonitor here, so the tests above can fail', async function () {
      this.timeout(120_000);
      const dir = path.join(root, `devrepo-${stamp}`);
      made.push(dir);
      repo(dir);
      fs.writeFileSync(path.join(dir, 'hook.sh'), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
      fs.appendFileSync(path.join(dir, '.git', 'config'), `[core]\n\tfsmonitor = "${path.join(dir, 'hook.sh')}"\n`);
      const r = await git.openRepository(vscode.Uri.file(dir));
      assert.ok(r);
      await r.status();
      assert.equal(fs.existsSync(marker), true, 'the git extension did not run core.fsmonitor');
    });

    it('workspace_info says the editor\'s git does not open new repositories, and what remains', async () => {
      const info = await call<{ execution: { isolation: { new_repositories: { editor_git: string; settings: Record<string, unknown>; remaining: string[] } } } }>(client, 'workspace_info', { workspace_id: wsId });
      const n = info.execution.isolation.new_repositories;
      assert.equal(n.editor_git, 'closed', JSON.stringify(n));
      assert.deepEqual(n.settings, { 'git.autoRepositoryDetection': false, 'git.detectSubmodules': false });
      assert.ok(n.remaining.length > 0);
    });
  });
});
