export { BoxAgent, type AgentOptions, type BoxIdentity } from './system.ts';
export {
  BoxLink,
  DEFAULT_RECONNECT_MAX_MS,
  DEFAULT_STABLE_MS,
  busyReason,
  type LinkOptions,
} from './link/connection.ts';
export { Backoff } from './timing/backoff.ts';
export { createPrinterDriver, createScannerDriver } from './drivers/registry.ts';
export { SimPrinter } from './drivers/sim/printer.ts';
export { SimScanner } from './drivers/sim/scanner.ts';
export { SimBuzzer, CommandBuzzer, type Buzzer } from './host/buzzer.ts';
export { readNetworkInfo, type NetworkInfo } from './host/network.ts';
export { createSimulatedBox, type SimulatedBox } from './simulator.ts';
export { tempStateDir } from './store/temp-state-dir.ts';
export { systemdSupervisor, type Supervisor } from './host/systemd.ts';
export { runLauncher, type LauncherOptions } from './update/launcher.ts';
export { EXIT_SWITCH } from './update/updater.ts';
