/** The built CLI's contract: exit codes and one-line errors. Needs `npm run build` (npm test does it). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli, runCliReaderGone } from '../helpers/cli';

const envWithout = (keys: string[]): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !keys.includes(k) && !k.startsWith('ZD_')));

describe('zdmatch CLI', () => {
  const env = envWithout([]);

  it('lists its commands', () => {
    const r = runCli(['--help'], { env });
    expect(r.status).toBe(0);
    for (const c of ['serve', 'dev', 'enqueue', 'queues', 'task']) expect(r.stdout).toMatch(new RegExp(`^\\s+${c}\\b`, 'm'));
  });

  it('prints its version from package.json and exits 0', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
    const r = runCli(['--version'], { env });
    expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 0, stdout: `${pkg.version}\n` });
  });

  it.each([
    [['nosuch'], "error: unknown command 'nosuch'", 'Usage: zdmatch [options] [command]'],
    [['cluster', '--nosuch'], "error: unknown option '--nosuch'", 'Usage: zdmatch cluster [options]'],
  ])('%j names what it did not know, shows the usage and exits 2', (args, line, usage) => {
    const r = runCli(args, { env });
    expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 2, stdout: '' });
    expect(r.stderr.split('\n')[0]).toBe(line);
    expect(r.stderr).toContain(usage);
  });

  it('a failure to reach the node is one line and exit 1; ZD_CLI_DEBUG=1 adds the stack', () => {
    const r = runCli(['task', 't1', '--address', '127.0.0.1:1'], { env });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 1, stderr: expect.stringMatching(/^error: [^\n]*ECONNREFUSED[^\n]*\n$/) });
    const debug = runCli(['task', 't1', '--address', '127.0.0.1:1'], { env: { ...env, ZD_CLI_DEBUG: '1' } });
    expect(debug.status).toBe(1);
    expect(debug.stderr).toMatch(/^error: [^\n]*\n\w*Error: [^\n]*\n\s+at /);
  });

  it.each([
    [['serve', '--matching.syncMatchWait=0'], 'config matching.syncMatchWait: must be greater than 0'],
    [['serve', '--matching.stickyWait', '11s'], 'config matching.stickyWait: 11000ms must not exceed matching.dispatchWait (10000ms)'],
    [['serve', '--matching.stickyWiat=1s'], 'config matching.stickyWiat: is not a known key'],
    [['dev', '--fetch.maxTasks=0'], 'config fetch.maxTasks: must be a positive integer'],
  ])('%j fails with exit 2 and one line', (args, line) => {
    const r = runCli(args, { env });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 2, stderr: `${line}\n` });
  });

  // The config loader would drop them, and the node start on its defaults.
  it.each([
    [['serve', '/etc/zdmatch/config.yaml'], '/etc/zdmatch/config.yaml'],
    [['serve', '-matching.stickyWait=2s'], '-matching.stickyWait=2s'],
    [['dev', 'dev.yaml', '--fetch.maxTasks=0'], 'dev.yaml'],
    // A flag that carries its value after '=' takes no next word.
    [['serve', '--matching.stickyWait=2s', 'config.yaml'], 'config.yaml'],
  ])('%j refuses a word that is not a config flag nor its value, exit 2', (args, word) => {
    const r = runCli(args, { env });
    expect({ status: r.status, stderr: r.stderr }).toEqual({
      status: 2,
      stderr: `unexpected argument ${JSON.stringify(word)}: config keys are flags (--section.key=value); a config file is --config <file>\n`,
    });
  });

  it.each([
    [['--help'], 'stdout', 0], [['task'], 'stderr', 2],
  ] as const)('%j exits with its own code, without a stack, when the reader of %s has gone', async (args, closed, status) => {
    const r = await runCliReaderGone([...args], closed, { env });
    expect({ status: r.status, other: closed === 'stdout' ? r.stderr : r.stdout }).toEqual({ status, other: '' });
  });

  it('serve --config of a missing file exits 2', () => {
    const r = runCli(['serve', '--config', path.join(os.tmpdir(), 'zdmatch-no-such-file.yaml')], { env });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^config file: cannot read .*zdmatch-no-such-file\.yaml: ENOENT\n$/);
  });

  it('serve reads a YAML config whose errors name the key', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zdmatch-cli-test-'));
    try {
      const file = path.join(dir, 'c.yaml');
      fs.writeFileSync(file, 'matching:\n  dispatchWait: 1s\n');
      const r = runCli(['serve', '--config', file], { env });
      expect(r.status).toBe(2);
      expect(r.stderr).toBe('config matching.stickyWait: 5000ms must not exceed matching.dispatchWait (1000ms)\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('env config errors exit 2 too', () => {
    const r = runCli(['serve'], { env: { ...env, ZD_MATCHING_SYNC_MATCH_WAIT: '0s' } });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('config matching.syncMatchWait: must be greater than 0\n');
  });

  it('dev without redis-server on PATH prints one line and exits 1', () => {
    const r = runCli(['dev'], { env: { ...env, PATH: '' } });
    expect({ status: r.status, stderr: r.stderr }).toEqual({
      status: 1,
      stderr: 'redis-server not found on PATH; install it with: apt-get install -y redis-server\n',
    });
  });

  it.each([
    [['task', 't1', '--address', '']], [['task', 't1', '--address', '10.255.255.1']], [['queues', '--tenant', 'acme', '--address', '127.0.0.1:99999']],
    [['terminal', 'list', '--tenant', 'acme', '--address', 'node a:8801']], [['cluster', '--address', 'http://127.0.0.1']],
    [['task', 't1', '--address', '127.0.0.1:0']],
  ])('%j names --address and exits 2 without dialling', (args) => {
    const since = Date.now();
    const r = runCli(args, { env, timeoutMs: 10_000 });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 2, stderr: expect.stringMatching(/^--address: must be host:port .*\n$/) });
    expect(Date.now() - since).toBeLessThan(5000);
  });

  it.each(['127.0.0.1:1', 'https://127.0.0.1:1', '[::1]:1'])('takes %j as an address (and fails only to reach it)', (address) => {
    const r = runCli(['task', 't1', '--address', address], { env, timeoutMs: 20_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).not.toMatch(/--address/);
  });

  it.each([[['task', 't1']], [['terminal', 'list', '--tenant', 'acme']]])('%j names ZD_TLS_CA when its file cannot be read, exit 2', (args) => {
    const r = runCli([...args, '--address', '127.0.0.1:1'], { env: { ...env, ZD_TLS_CA: '/nonexistent/ca.pem' } });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 2, stderr: 'ZD_TLS_CA: cannot read /nonexistent/ca.pem: ENOENT\n' });
  });

  it.each([['with a newline', 'abc123\n'], ['with a space', 'abc 123']])('names ZD_TOKEN when it holds a token %s, exit 2', (_label, token) => {
    const r = runCli(['task', 't1', '--address', '127.0.0.1:1'], { env: { ...env, ZD_TOKEN: token } });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 2, stderr: 'ZD_TOKEN: must be printable ASCII without spaces or newlines (or use ZD_TOKEN_FILE)\n' });
  });

  it.each([[['task', 't1']], [['terminal', 'list', '--tenant', 'acme']]])('%j names ZD_TOKEN_FILE when its file cannot be read, exit 2', (args) => {
    const r = runCli([...args, '--address', '127.0.0.1:1'], { env: { ...env, ZD_TOKEN_FILE: '/nonexistent/token' } });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 2, stderr: 'ZD_TOKEN_FILE: cannot read /nonexistent/token: ENOENT\n' });
  });

  it('enqueue names a missing required option and exits 2', () => {
    const r = runCli(['enqueue', '--tenant', 'acme'], { env });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("required option '--flow-id <id>' not specified");
  });

  it.each([
    ['--tenant <tenant>', 0], ['--flow-id <id>', 1], ['--flow-type <type>', 2], ['--step-type <type>', 3],
  ] as const)('enqueue without %s names it and exits 2 without dialling', (flag, i) => {
    const given = [['--tenant', 'acme'], ['--flow-id', 'f1'], ['--flow-type', 'order'], ['--step-type', 'charge']].filter((_, j) => j !== i).flat();
    const r = runCli(['enqueue', ...given, '--address', '127.0.0.1:1'], { env });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`required option '${flag}' not specified`);
  });

  it.each([
    [['enqueue', '--tenant', '', '--flow-id', 'f', '--flow-type', 't', '--step-type', 's'], "option '--tenant <tenant>' argument '' is invalid"],
    [['enqueue', '--tenant', 'a', '--flow-id', 'f', '--flow-type', 't', '--step-type', 's', '--step-execution-id', ''], "option '--step-execution-id <id>'"],
    [['queues', '--tenant', ''], "option '--tenant <tenant>'"],
    [['task', ''], "argument 'taskId'"],
    [['terminal', 'abandon', '', '--reason', 'r'], "argument 'taskId'"],
    [['outcome-groups', 'drop', ''], "argument 'group'"],
  ])('%j names the empty value and exits 2 without dialling', (args, names) => {
    const r = runCli([...args, '--address', '127.0.0.1:1'], { env });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 2, stderr: expect.stringContaining(names) });
    expect(r.stderr).toContain('must not be empty');
  });

  it('enqueue --input @file of a missing file exits 2', () => {
    const r = runCli(
      ['enqueue', '--tenant', 'a', '--flow-id', 'f', '--flow-type', 't', '--step-type', 's', '--input', '@/nonexistent/input.json'],
      { env },
    );
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 2, stderr: '--input: cannot read /nonexistent/input.json: ENOENT\n' });
  });
});
