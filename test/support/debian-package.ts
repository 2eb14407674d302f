import { execFileSync } from 'node:child_process';

function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes `command` available by installing Debian's `pkg` with apt-get when it is missing
 * (refreshing the package lists first when the install fails for want of them), so a test
 * that needs a real program runs it rather than skipping.
 */
export function ensureDebianPackage(command: string, pkg: string): void {
  if (onPath(command)) return;
  const install = () =>
    execFileSync('apt-get', ['install', '-y', pkg], {
      stdio: 'pipe',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  try {
    install();
  } catch {
    execFileSync('apt-get', ['update'], { stdio: 'pipe' });
    install();
  }
  if (!onPath(command)) throw new Error(`apt-get installed ${pkg} but ${command} is still not on PATH`);
}
