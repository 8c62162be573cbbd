/** The quantity in a field of an object under review, as the rules of every family read it. */
import { quantityOf } from '../../util/quantity.js';
import { failure, type Result } from '../../util/result.js';
import { atField, type FieldError, type FieldPath } from './field-errors.js';

/** quantityOf the value at `path`, an error naming the path when it cannot be read. */
export function quantityAt(value: unknown, path: FieldPath): Result<bigint, FieldError> {
  const read = quantityOf(value);
  return read.ok ? read : failure(atField(path, read.error));
}
