/**
 * The RPC handler of the chaos soak's worker processes (worker-process.js):
 * `echo` answers `echo <input>`, so a caller that gets another call's answer
 * sees it (rpc-load.ts). It tells the parent, over IPC, every call it starts,
 * before running it: each call's input is unique, so a call run twice, on two
 * workers or on one, shows. Now and then it fails (the failure names the input too),
 * or hangs past the caller's deadline, deaf to its signal, so the node answers
 * UNAVAILABLE while the slot is still busy.
 */
'use strict';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

module.exports = function rpcHandlers(appWorkerId) {
  return {
    echo: async (ctx) => {
      const input = ctx.input.toString();
      process.send({ rpc: input, worker: appWorkerId });
      const dice = Math.random();
      if (dice < 0.02) await sleep(Math.max(0, (ctx.deadline ? ctx.deadline.getTime() : Date.now()) - Date.now()) + 300);
      else await sleep(Math.floor(Math.random() * 20));
      if (dice > 0.97) throw new Error(`refused ${input}`);
      return `echo ${input}`;
    },
  };
};
