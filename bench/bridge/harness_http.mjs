// The load generator's HTTP side for bench/bridge/load.mjs: test servers started as child
// processes (they print "PORT <n>"), and JSON requests over kept-alive node:http connections.
import { spawn } from 'node:child_process';
import http from 'node:http';

// Starts `cmd args` and resolves with {proc, port} once it prints "PORT <n>".
export function server(cmd, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    let buf = '';
    p.stdout.on('data', (d) => {
      buf += d;
      const m = buf.match(/PORT (\d+)/);
      if (m) resolve({ proc: p, port: +m[1] });
    });
    p.on('exit', (code) => reject(new Error(cmd + ' exited ' + code)));
  });
}

// call(method, path, body, token) -> the parsed JSON answer (null when empty). The users' requests
// go over kept-alive connections, one per user at the burst (opened before the clock starts), as
// each user's own client would hold one: undici's fetch cost the load generator about 1.5 ms of
// CPU per request and a new TCP connection per concurrent post, on the two cores the bridge and
// the server need. contentType: what a body is sent as.
export function jsonCaller(base, contentType = 'application/json') {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  return function call(method, p, body, token) {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const headers = data === undefined ? {} : { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(data) };
    if (token) headers.Authorization = 'Bearer ' + token;
    return new Promise((resolve, reject) => {
      const req = http.request(base + p, { method, agent, headers },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const t = Buffer.concat(chunks).toString('utf8');
          try { resolve(t ? JSON.parse(t) : null); } catch (e) { reject(e); }
        });
      });
      req.on('error', reject);
      req.end(data);
    });
  };
}
