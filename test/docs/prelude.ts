import type * as P from './placeholders.js';

// The documentation's placeholders (see placeholders.ts) as globals, for the type-check of the code blocks only:
// a block uses `order` or `pool` as the reader's own, and a block that defines the name itself shadows it.
//
// tsconfig.json excludes this file, and only test/docs/typecheck.ts loads it, so no test or source file can lean
// on these globals by accident. A `.ts`, not a `.d.ts`, so that `skipLibCheck` does not skip it.

declare global {
  type Order = P.Order;
  type Payment = P.Payment;
  type PaymentCreated = P.PaymentCreated;

  const payments: P.Placeholders['payments'];
  const charge: P.Placeholders['charge'];
  const buildReport: P.Placeholders['buildReport'];
  const applyPayment: P.Placeholders['applyPayment'];
  const ledger: P.Placeholders['ledger'];
  const order: P.Placeholders['order'];
  const payment: P.Placeholders['payment'];
  const message: P.Placeholders['message'];
  const log: P.Placeholders['log'];
  const clientKey: P.Placeholders['clientKey'];
  const rawBody: P.Placeholders['rawBody'];
  const body: P.Placeholders['body'];
  const pool: P.Placeholders['pool'];
  const redis: P.Placeholders['redis'];
  const store: P.Placeholders['store'];
  const publisher: P.Placeholders['publisher'];
  const tx: P.Placeholders['tx'];
  const MyStore: P.Placeholders['MyStore'];
}
