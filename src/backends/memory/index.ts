// odata-engine/memory: bound queries compiled to closures over JavaScript arrays.
export {
  compileQuery,
  runQuery,
  type CompiledQuery,
  type CompileOptions,
  type RelatedRows,
  type Row,
  type RunResult,
} from './compile.js';
