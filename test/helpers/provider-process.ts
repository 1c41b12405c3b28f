/** The `nd-id-provider` command run from source as its own process, for CLI tests. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';

/** A running provider process and the base URL it printed when ready. */
export interface ProviderProcess {
  child: ChildProcessWithoutNullStreams;
  baseUrl: string;
}

/**
 * Start `src/provider/cli.ts` with `args` (through tsx, from the repo root) and resolve once it
 * prints "ready at <url>"; reject if it exits first. The caller kills `child` when done.
 */
export async function startProviderProcess(args: string[], subjectSecret: string): Promise<ProviderProcess> {
  const child = spawn(
    process.execPath,
    [join('node_modules', 'tsx', 'dist', 'cli.mjs'), join('src', 'provider', 'cli.ts'), ...args],
    {
      cwd: process.cwd(),
      env: { ...process.env, ND_ID_SUBJECT_SECRET: subjectSecret },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  child.stdin.end();
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /ready at (http:\/\/\S+) /.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the provider exited with ${code} before it was ready`)));
  });
  return { child, baseUrl };
}
