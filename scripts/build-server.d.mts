/** scripts/build-server.mjs: the built server's entries. */
export function serverEntry(name: 'main' | 'server-commands'): Promise<string>;
export function buildServer(): Promise<{ id: string; started: number; inputs: string[] }>;
