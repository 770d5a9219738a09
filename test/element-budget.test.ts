/**
 * The element budget held as an answer arrives (`ElementBudget`, used by every XML call): the same
 * count as `checkElementBudget` on the whole answer, however the answer is cut into pieces, and an
 * answer of millions of elements ends at the first piece beyond the budget, not after being read.
 */
import { strict as assert } from 'node:assert';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IpcamError } from '../lib/errors/errors';
import { DeviceClient } from '../lib/transport/client';
import { xmlExchange as xmlCall } from '../lib/answer';
import { checkElementBudget, ElementBudget } from '../lib/xml/well-formed';
import { expectRejection, prng } from './helpers';

/** Whether `check` refuses (EPARSE for the element budget) or accepts. */
function refuses(check: () => void): boolean {
  try {
    check();
    return false;
  } catch (err) {
    assert.ok(err instanceof IpcamError && err.code === 'EPARSE', String(err));
    return true;
  }
}

const PIECES = ['<a>', '<b/>', '</a>', '<!-- <x><y> -->', '<![CDATA[ <p><q> ]]>', '<?pi <z> ?>', '<!DOCTYPE d>', 'text', ' ', '<c k="v">', '</c>'];

describe('the element budget as the answer arrives', function () {
  it('counts as the whole-answer check does, however the answer is cut (2,000 random answers and cuts)', function () {
    const random = prng(18);
    for (let round = 0; round < 2000; round++) {
      let text = '<r>';
      const parts = Math.floor(random() * 60);
      for (let i = 0; i < parts; i++) text += PIECES[Math.floor(random() * PIECES.length)];
      text += '</r>';
      const bytes = Buffer.from(text);
      const budget = Math.floor(random() * 30);
      const whole = refuses(() => checkElementBudget(bytes, budget));
      const streamed = new ElementBudget(budget);
      const cut = refuses(() => {
        for (let at = 0; at < bytes.length; ) {
          const size = 1 + Math.floor(random() * 8);
          streamed.push(bytes.subarray(at, at + size));
          at += size;
        }
      });
      assert.equal(cut, whole, `budget ${budget}: ${text}`);
    }
  });

  it('ends a hostile answer of millions of elements at the budget, without reading it whole', async function () {
    let sent = 0;
    let closed = false;
    const server: Server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.write('<?xml version="1.0"?><config>');
      const piece = '<i/>'.repeat(16_384);
      const more = (): void => {
        // About 4 million elements in all unless the client stops reading.
        while (sent < 256 && res.write(piece)) sent++;
        if (sent >= 256) res.end('</config>');
      };
      res.on('drain', more);
      res.on('close', () => (closed = true));
      more();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = new DeviceClient({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
    try {
      await expectRejection(xmlCall(client, { path: '/GetDeviceInfo', method: 'GET' }), 'EPARSE', /more than 10000 XML elements/);
      assert.ok(sent < 256, `the device sent ${sent} of 256 pieces: the answer was read to its end`);
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    assert.ok(closed || sent < 256);
  });
});
