// Starts the agui-server binary (offline scripted model, unless `env` names another) in a
// temporary directory holding one known file, and resolves with its URL once it prints it.
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export function serverBinary() {
  if (process.env.AGUI_SERVER_BIN) return process.env.AGUI_SERVER_BIN
  const target = process.env.CARGO_TARGET_DIR
  if (!target) throw new Error('set AGUI_SERVER_BIN (or CARGO_TARGET_DIR) to find the agui-server binary')
  return join(target, 'debug', 'agui-server')
}

export async function startServer({ env: extra = {} } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'agui-test-'))
  writeFileSync(join(dir, 'hello.txt'), 'hello from the AG-UI test\n')
  const env = { ...process.env }
  for (const name of Object.keys(env)) if (name.startsWith('LLM_')) delete env[name]
  Object.assign(env, extra)
  const child = spawn(serverBinary(), ['--addr', '127.0.0.1:0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`agui-server printed no URL in 10 s:\n${output}`)), 10_000)
    const onData = (chunk) => {
      output += chunk
      const match = /AG-UI endpoint: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve(match[1])
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.on('exit', (code) => reject(new Error(`agui-server exited with ${code}:\n${output}`)))
  })
  return {
    url,
    output: () => output,
    async stop() {
      child.kill('SIGTERM')
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
