export { createPinoLogger, type PinoLoggerOptions } from "./pino.js";
export { createRecordingLogger, silentLogger, type LogLine, type RecordingLogger } from "./recording.js";
