// Preloaded into a zdmatch process (node --require): once it has written a line holding
// STALL_AFTER (to stdout, or through a synchronous write as its logger does), the process
// stalls 500 ms, as a busy machine may deschedule it right after that write.
'use strict';
const fs = require('node:fs');
const text = process.env.STALL_AFTER;
const stall = (data) => {
  if (text && String(data).includes(text)) {
    const until = Date.now() + 500;
    while (Date.now() < until);
  }
};
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  const done = write(chunk, ...rest);
  stall(chunk);
  return done;
};
const writeSync = fs.writeSync;
fs.writeSync = (...args) => {
  const n = writeSync(...args);
  stall(args[1]);
  return n;
};
