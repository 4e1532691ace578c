// What VS Code starts for a rewind session: `rewind dap` on stdin/stdout for launch, a TCP
// connection to a `rewind dap --listen` server for attach (docs/dap.md). Pure; factory.ts
// turns it into a DebugAdapterExecutable or DebugAdapterServer.
import { RewindConfiguration, parsePort } from './configuration';
import { RewindLocation } from './adapterLocation';

/** The adapter to start: a program with arguments, or a server to connect to. */
export type AdapterDescriptor =
  | { kind: 'executable'; command: string; args: string[] }
  | { kind: 'server'; host: string; port: number }
  | { kind: 'error'; message: string };

/**
 * The adapter for `config`: attach connects to host:port (default 127.0.0.1) and needs no
 * local rewind; launch runs `<rewind> dap`, or reports why rewind cannot be found.
 */
export function adapterFor(config: RewindConfiguration, rewind: RewindLocation): AdapterDescriptor {
  if (config.request === 'attach') {
    const port = parsePort(config.port);
    if (port === undefined)
      return { kind: 'error', message: '"port" must be the port of a `rewind dap --listen PORT` server.' };
    return { kind: 'server', host: config.host || '127.0.0.1', port };
  }
  if ('error' in rewind) return { kind: 'error', message: rewind.error };
  return { kind: 'executable', command: rewind.path, args: ['dap'] };
}
