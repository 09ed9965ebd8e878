// The kit against SAP CAP on SQLite (cap-suite.ts).
import { capSuite } from './cap-suite.js';

capSuite('sqlite');
