// Preloaded with --import into a measured pushctl: reads audience CSV with csv-parse
// (bench/csv-parse-source.js) in place of the hand-written shared/audience/csv-source.js,
// so bench/enqueue.js can time both parsers through the same command.
import { register } from 'node:module';

register('./csv-parser-resolve.js', import.meta.url);
