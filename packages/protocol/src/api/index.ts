export * from './envelope.ts';
export * from './devices.ts';
export * from './control.ts';
export * from './callbacks.ts';
