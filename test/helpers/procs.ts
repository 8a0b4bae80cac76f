/**
 * Processes as /proc shows them: the children of a pid, and whether one still
 * runs (a zombie does not). For tests of what a command leaves running.
 */
import fs from 'node:fs';

export interface Proc {
  pid: number;
  cmdline: string;
}

/** Child processes of `pid`. */
export function childrenOf(pid: number): Proc[] {
  const out: Proc[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== pid) continue;
      out.push({ pid: Number(entry), cmdline: fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ') });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** Every process below `pid`, children first. */
export function descendantsOf(pid: number): Proc[] {
  const out: Proc[] = [];
  for (const c of childrenOf(pid)) out.push(c, ...descendantsOf(c.pid));
  return out;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
