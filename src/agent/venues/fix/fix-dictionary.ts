import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** Messages where cTrader adds PosMaintRptID (721), the position an order opens, closes or protects. */
const WITH_POSITION_ID = ['NewOrderSingle', 'ExecutionReport'];

/**
 * jspurefix encodes and decodes only the fields its dictionary names for a message, and FIX
 * 4.4's NewOrderSingle and ExecutionReport have no PosMaintRptID: without it an order naming
 * its position would leave without 721, and a fill would arrive without it. This writes
 * jspurefix's own FIX 4.4 dictionary with 721 added to those two messages into `dir` and
 * answers its path (jspurefix takes a dictionary file by absolute path).
 */
export function ctraderDictionary(dir: string): string {
  const require = createRequire(import.meta.url);
  const root = path.resolve(path.dirname(require.resolve('jspurefix')), '..');
  let xml = readFileSync(path.join(root, 'data', 'FIX44.xml'), 'utf8');
  for (const message of WITH_POSITION_ID) {
    const open = new RegExp(`(<message name='${message}'[^>]*>\\n)`);
    if (!open.test(xml)) throw new Error(`jspurefix's FIX 4.4 dictionary has no ${message} message`);
    xml = xml.replace(open, `$1   <field name='PosMaintRptID' required='N' />\n`);
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, 'FIX44-ctrader.xml');
  writeFileSync(file, xml, { mode: 0o600 });
  return file;
}
