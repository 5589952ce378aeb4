/** rbush-knn 4 (no bundled typings): k nearest items of an RBush by box distance, nearest first. */
declare module "rbush-knn" {
  import type RBush from "rbush";
  export default function knn<T>(
    tree: RBush<T>,
    x: number,
    y: number,
    n?: number,
    predicate?: (item: T) => boolean,
    maxDistance?: number,
  ): T[];
}
