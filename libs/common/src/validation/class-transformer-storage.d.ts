// class-transformer ships no typings next to its CommonJS files; its metadata storage is typed in types/.
declare module 'class-transformer/cjs/storage.js' {
  export { defaultMetadataStorage } from 'class-transformer/types/storage.js';
}
