#!/usr/bin/env node
// The server as the supervised process (systemd, a container's entry point, a process manager; `npm start` runs it
// too): the server runs in this process, so the pid a supervisor starts and signals IS the server, which drains and
// exits 0 on SIGTERM or SIGINT. No npm or shell sits between them to lose a signal. It runs the built server
// (scripts/build-server.mjs), rebuilt first if a source changed since; stack traces name the sources.
import { serverEntry } from '../scripts/build-server.mjs';

process.setSourceMapsEnabled(true);
await import(await serverEntry('main'));
