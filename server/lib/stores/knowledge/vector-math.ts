/** The little vector arithmetic embeddings need (unit length, so that cosine similarity is a dot product). */

/** Scales `vector` to length 1 (cosine similarity is then a dot product); a zero vector stays zero. */
export function unitLength(vector: Float32Array): Float32Array {
  let sum = 0
  for (const value of vector) sum += value * value
  const length = Math.sqrt(sum)
  if (length > 0) for (let index = 0; index < vector.length; index++) vector[index]! /= length
  return vector
}

/** The dot product of two vectors of one length (their cosine similarity when both have length 1). */
export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0
  for (let index = 0; index < a.length; index++) sum += a[index]! * b[index]!
  return sum
}
