/** What the linked-accounts module offers outside it (the benchmarks build rows with these, nothing deeper). */
export { LinkedAccountsModule } from './linked-accounts.module.js';
export { LinkedAccountEntity } from './linked-account.entity.js';
