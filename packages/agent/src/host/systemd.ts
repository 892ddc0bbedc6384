// systemd service notifications (sd_notify(3)) for a box that runs the agent as a unit with
// Type=notify and WatchdogSec= (docs/box-agent.service). Node cannot send on a unix datagram
// socket itself, so each notification runs `systemd-notify` (the unit sets NotifyAccess=all,
// since the sender is a child process). Nothing happens outside systemd (no NOTIFY_SOCKET).
import { execFile } from 'node:child_process';

export interface Supervisor {
  /** Tells systemd the agent has started (READY=1) and starts the watchdog pings. */
  ready(): void;
  /** Tells systemd the agent is stopping and stops the pings. */
  stopping(): void;
}

export function systemdSupervisor(env: NodeJS.ProcessEnv = process.env, log?: (msg: string) => void): Supervisor {
  if (!env.NOTIFY_SOCKET) return { ready: () => undefined, stopping: () => undefined };
  const notify = (...states: string[]) => {
    execFile('systemd-notify', states, { timeout: 5000 }, (err) => {
      if (err) log?.(`systemd-notify failed: ${err.message}`);
    });
  };
  // WATCHDOG_USEC is the unit's WatchdogSec=; pinging at half of it is what sd_watchdog_enabled(3)
  // advises. The pings come from the event loop, so a loop that hangs stops them and systemd
  // restarts the agent.
  const usec = Number(env.WATCHDOG_USEC);
  const pid = Number(env.WATCHDOG_PID);
  const watchdog = Number.isFinite(usec) && usec > 0 && (!pid || pid === process.pid);
  let timer: NodeJS.Timeout | undefined;
  return {
    ready() {
      notify('--ready', `--pid=${process.pid}`);
      if (watchdog && !timer) {
        timer = setInterval(() => notify(`--pid=${process.pid}`, 'WATCHDOG=1'), Math.max(500, Math.floor(usec / 2000)));
        timer.unref();
      }
    },
    stopping() {
      if (timer) clearInterval(timer);
      timer = undefined;
      notify(`--pid=${process.pid}`, 'STOPPING=1');
    },
  };
}
