import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createPinoLogger, createRecordingLogger } from "../../src/adapters/logging/index.js";

describe("loggers", () => {
  it("pino writes one JSON line per call, with the fields and the level filter", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString().split("\n").filter((l) => l !== ""));
        done();
      },
    });
    const logger = createPinoLogger({ level: "info", destination: sink });
    logger.debug({ hidden: true }, "not shown");
    logger.info({ channel: "ratio_dbs", priority: 4.5 }, "smoosh: enqueued");
    logger.child?.({ subsystem: "smoosh" }).warn({}, "careful");
    expect(lines).toHaveLength(2);
    const first = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(first).toMatchObject({ level: 30, name: "upholster", channel: "ratio_dbs", priority: 4.5, msg: "smoosh: enqueued" });
    expect(JSON.parse(lines[1]!)).toMatchObject({ level: 40, subsystem: "smoosh", msg: "careful" });
  });

  it("property: the recording logger keeps the last maxLines lines in order, with child bindings", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.array(fc.string(), { maxLength: 60 }), (maxLines, messages) => {
        const logger = createRecordingLogger(maxLines);
        const child = logger.child!({ subsystem: "x" });
        messages.forEach((msg, i) => (i % 2 === 0 ? logger : child).info({ i }, msg));
        const kept = messages.slice(Math.max(0, messages.length - maxLines));
        expect(logger.lines.map((l) => l.msg)).toEqual(kept);
        for (const line of logger.lines) expect(line.fields["subsystem"]).toBe((line.fields["i"] as number) % 2 === 0 ? undefined : "x");
      }),
    );
  });
});
