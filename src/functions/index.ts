/** What the functions module offers outside it (the benchmarks use these, nothing deeper). */
export { FunctionsModule } from './functions.module.js';
export { FunctionEntity } from './function.entity.js';
export { ProviderRules } from './provider-rules.js';
