/**
 * A GeoIndexReader over a plain array with linear scans: the reference the
 * R-tree adapter must agree with, and cheap shards for merge tests.
 */
import { isRight } from "fp-ts/lib/Either.js";
import {
  envelopesMeet,
  geometryFacts,
  jstsOf,
  validateGeoJson,
  type Envelope,
  type GeoIndexReader,
  type GeoJsonGeometry,
  type GeometryFacts,
  type JstsGeometry,
} from "../../../src/core/geo/index.js";

interface Entry {
  readonly id: string;
  readonly rev: string;
  readonly ordinal: number;
  readonly geometry: GeoJsonGeometry;
  readonly facts: GeometryFacts;
  jsts: JstsGeometry | undefined;
}

export class BruteForceReader implements GeoIndexReader {
  private entries: Entry[] = [];

  constructor(docs: Iterable<readonly [string, readonly GeoJsonGeometry[]]> = []) {
    for (const [id, geometries] of docs) this.upsert(id, "1-x", geometries);
  }

  upsert(id: string, rev: string, geometries: readonly GeoJsonGeometry[]): void {
    this.remove(id);
    for (const [ordinal, raw] of geometries.entries()) {
      const valid = validateGeoJson(raw);
      if (!isRight(valid)) throw new Error(valid.left);
      const facts = geometryFacts(valid.right);
      if (!isRight(facts)) throw new Error(facts.left);
      this.entries.push({ id, rev, ordinal, geometry: valid.right, facts: facts.right, jsts: undefined });
    }
  }

  remove(id: string): void {
    this.entries = this.entries.filter((e) => e.id !== id);
  }

  get size(): number {
    return this.entries.length;
  }

  private at(entry: number): Entry {
    return this.entries[entry]!;
  }

  forEachInEnvelope(envelope: Envelope, visitPoint: (entry: number, x: number, y: number) => void, visitShape: (entry: number) => void): void {
    this.entries.forEach((e, i) => {
      if (!envelopesMeet(e.facts, envelope)) return;
      if (e.facts.isPoint) visitPoint(i, e.facts.centroidX, e.facts.centroidY);
      else visitShape(i);
    });
  }

  envelopeOf(entry: number): Envelope {
    const { minX, minY, maxX, maxY } = this.at(entry).facts;
    return { minX, minY, maxX, maxY };
  }

  nearestEntries(x: number, y: number, count: number, accept: ((entry: number) => boolean) | undefined): readonly number[] {
    const distanceSq = (i: number): number => (this.at(i).facts.centroidX - x) ** 2 + (this.at(i).facts.centroidY - y) ** 2;
    return this.entries
      .map((_, i) => i)
      .filter((i) => accept === undefined || accept(i))
      .sort((a, b) => distanceSq(a) - distanceSq(b))
      .slice(0, count);
  }

  docId(entry: number): string {
    return this.at(entry).id;
  }

  rev(entry: number): string {
    return this.at(entry).rev;
  }

  ordinal(entry: number): number {
    return this.at(entry).ordinal;
  }

  geometry(entry: number): GeoJsonGeometry {
    return this.at(entry).geometry;
  }

  centroidX(entry: number): number {
    return this.at(entry).facts.centroidX;
  }

  centroidY(entry: number): number {
    return this.at(entry).facts.centroidY;
  }

  isPoint(entry: number): boolean {
    return this.at(entry).facts.isPoint;
  }

  isCollection(entry: number): boolean {
    return this.at(entry).facts.isCollection;
  }

  jsts(entry: number): JstsGeometry {
    const e = this.at(entry);
    e.jsts ??= jstsOf(e.geometry);
    return e.jsts;
  }
}
