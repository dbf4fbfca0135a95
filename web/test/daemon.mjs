// The real colltune daemon for browser tests: started on a free loopback port with a config
// file, stopped with SIGTERM, restarted on the same port and store; plus a small API client.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export const ADMIN_TOKEN = 'admin-token-for-browser-tests-0001';
export const VIEWER_TOKEN = 'viewer-token-for-browser-tests-0001';

export class Daemon {
  constructor({ binary, workDir, webRoot, backends }) {
    this.binary = binary;
    this.workDir = workDir;
    this.webRoot = webRoot;
    this.backends = backends;
    this.proc = null;
    this.port = 0;
    this.logPath = path.join(workDir, 'daemon.log');
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  async start() {
    if (!this.port) this.port = await freePort();
    const config = {
      listen: `127.0.0.1:${this.port}`,
      database: path.join(this.workDir, 'colltune.db'),
      rules_dir: path.join(this.workDir, 'rules'),
      web_root: this.webRoot,
      backends: this.backends,
      tokens: [
        { token: ADMIN_TOKEN, role: 'admin' },
        { token: VIEWER_TOKEN, role: 'viewer' },
      ],
    };
    const configPath = path.join(this.workDir, 'config.json');
    fs.writeFileSync(configPath, JSON.stringify(config, null, 2));
    const log = fs.openSync(this.logPath, 'a');
    this.proc = spawn(this.binary, ['serve', '--config', configPath], {
      stdio: ['ignore', log, log],
      env: { ...process.env, OMPI_ALLOW_RUN_AS_ROOT: '1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: '1' },
    });
    fs.closeSync(log);
    const exited = new Promise((resolve) => this.proc.once('exit', (code) => resolve(code)));
    this.exited = exited;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 150))]);
      if (code !== undefined) {
        throw new Error(`colltune serve exited with ${code}:\n${fs.readFileSync(this.logPath, 'utf8').slice(-2000)}`);
      }
      try {
        const r = await fetch(`${this.url}/api/v1/health`);
        if (r.ok) return;
      } catch {
        // not listening yet
      }
    }
    throw new Error(`colltune serve did not answer within 20 s:\n${fs.readFileSync(this.logPath, 'utf8').slice(-2000)}`);
  }

  async stop() {
    if (!this.proc || this.proc.exitCode !== null) return;
    this.proc.kill('SIGTERM');
    const timeout = setTimeout(() => this.proc.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(timeout);
  }

  async api(pathname, { method = 'GET', body, token = ADMIN_TOKEN } = {}) {
    const headers = { Authorization: `Bearer ${token}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const r = await fetch(`${this.url}${pathname}`, {
      method,
      headers,
      body: body === undefined ? (method === 'POST' ? '' : undefined) : JSON.stringify(body),
    });
    const text = await r.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: r.status, json, text };
  }
}
