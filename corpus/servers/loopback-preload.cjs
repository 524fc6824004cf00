// Node `--require` preload: makes every TCP server in the process listen on
// 127.0.0.1 only. server-everything's Streamable HTTP mode calls
// `app.listen(PORT, cb)` with no host (so Node binds every interface) and has
// no host option; mcptape's tests and corpus script run it with
//   node --require corpus/servers/loopback-preload.cjs .../dist/index.js streamableHttp
// and check with `ss -ltn` that nothing listens beyond loopback.
"use strict";
const net = require("node:net");
const HOST = "127.0.0.1";
const original = net.Server.prototype.listen;
net.Server.prototype.listen = function listen(...args) {
  const first = args[0];
  if (first !== null && typeof first === "object" && !Array.isArray(first)) {
    // listen(options[, cb]): a TCP options object has port/host; leave IPC paths alone.
    if (first.path === undefined) {
      args[0] = { ...first, host: HOST };
    }
  } else if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    // listen(port[, host][, backlog][, cb]): replace or insert the host.
    if (typeof args[1] === "string") {
      args[1] = HOST;
    } else {
      args.splice(1, 0, HOST);
    }
  } else if (first === undefined || typeof first === "function") {
    // listen([cb]): a random port on every interface -> a random port on loopback.
    args.unshift(0, HOST);
  }
  return original.apply(this, args);
};
