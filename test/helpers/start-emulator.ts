/** Starts node emulators on free loopback ports and closes them when the test ends. */
import { createEmulator, type Emulator, type EmulatorOptions } from '../../devnode/server.js'

type WithAfter = { after (fn: () => unknown): void }

export async function startEmulator (t: WithAfter, options: EmulatorOptions = {}): Promise<Emulator> {
  const emulator = await createEmulator({ ...options, port: 0 })
  t.after(() => emulator.close())
  return emulator
}

export async function startEmulators (t: WithAfter, count: number, options: EmulatorOptions = {}): Promise<Emulator[]> {
  return Promise.all(Array.from({ length: count }, () => startEmulator(t, options)))
}
