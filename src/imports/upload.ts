import busboy from 'busboy';
import type { Request } from 'express';
import type { Readable } from 'node:stream';
import { ApiError } from '../common/errors/api-error';
import { ImportFormat } from './import.entity';
import { UPLOAD_LIMITS } from './import-rows';
import { tooLarge } from './row-reader';

/** The form fields a multipart upload may carry besides its `file` part (the query parameters' names). */
export const FORM_FIELDS = ['kind', 'dry_run', 'format'] as const;
export type FormFields = Partial<Record<(typeof FORM_FIELDS)[number], string>>;

/** The file of an upload: its bytes as they arrive, the format its media type says (if it says one), the form fields. */
export interface UploadedFile {
  chunks: AsyncIterable<Uint8Array>;
  format: ImportFormat | null;
  fields: FormFields;
  /** After the chunks: true when the file was cut at the size limit (busboy's), so the upload is refused (413). */
  truncated: () => boolean;
}

const CSV_TYPES = ['text/csv', 'application/csv'];
const JSONL_TYPES = [
  'application/x-ndjson',
  'application/jsonl',
  'application/x-jsonlines',
  'application/jsonlines',
];

function mediaType(contentType: string): { type: string; charset: string | undefined } {
  const [type, ...parameters] = contentType.split(';');
  const charset = parameters
    .map((parameter) => parameter.trim().match(/^charset\s*=\s*"?([^";\s]*)"?$/i)?.[1])
    .find((value) => value !== undefined);
  return { type: type.trim().toLowerCase(), charset: charset?.toLowerCase() };
}

/** The format a media type names, or null (application/octet-stream, say: the format field decides). */
export function formatOf(type: string): ImportFormat | null {
  if (CSV_TYPES.includes(type)) {
    return ImportFormat.Csv;
  }
  return JSONL_TYPES.includes(type) ? ImportFormat.Jsonl : null;
}

function refuseCharset(charset: string | undefined): void {
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ApiError('unsupported_media_type', `The file must be UTF-8, not ${charset.slice(0, 40)}.`);
  }
}

/**
 * The upload's file: the body itself (text/csv, application/x-ndjson or application/jsonl, at most 50 MB: a larger
 * Content-Length is refused before anything is read) or the `file` part of a multipart/form-data body, whose other
 * parts (kind, dry_run, format) must come before it. 415 for any other media type or a charset other than UTF-8.
 */
export function openUpload(req: Request): Promise<UploadedFile> {
  const { type, charset } = mediaType(req.headers['content-type'] ?? '');
  if (type === 'multipart/form-data') {
    return openMultipart(req);
  }
  const format = formatOf(type);
  if (format === null) {
    throw new ApiError(
      'unsupported_media_type',
      `Content-Type must be text/csv, application/x-ndjson, application/jsonl or multipart/form-data, got "${type || 'none'}".`,
    );
  }
  refuseCharset(charset);
  if (Number(req.headers['content-length'] ?? 0) > UPLOAD_LIMITS.maxBytes) {
    throw tooLarge();
  }
  return Promise.resolve({ chunks: req, format, fields: {}, truncated: () => false });
}

/** What a multipart upload has read so far, and how it answers. */
interface FormState {
  fields: FormFields;
  file: (Readable & { truncated?: boolean }) | null;
  resolve: (file: UploadedFile) => void;
  fail: (error: ApiError) => void;
}

const FORM_LIMITS = {
  files: 1,
  fields: FORM_FIELDS.length,
  fieldSize: 100,
  parts: 10,
  fileSize: UPLOAD_LIMITS.maxBytes,
};

const formError = (message: string, field: string | null = null) =>
  new ApiError('invalid_import_file', message, field);

function onField(state: FormState, name: string, value: string): void {
  const shown = name.slice(0, 40);
  if (state.file !== null) {
    return state.fail(
      formError(`The form field ${shown} comes after the file: send kind, dry_run and format first.`, shown),
    );
  }
  if (!(FORM_FIELDS as readonly string[]).includes(name)) {
    return state.fail(
      new ApiError(
        'unknown_field',
        `Unknown form field ${shown}: an upload takes file, ${FORM_FIELDS.join(', ')}.`,
        shown,
      ),
    );
  }
  state.fields[name as keyof FormFields] = value;
}

function onFile(
  state: FormState,
  name: string,
  stream: Readable & { truncated?: boolean },
  info: { filename: string | undefined; mimeType: string },
): void {
  if (name !== 'file') {
    stream.resume();
    return state.fail(formError(`The file part must be named "file", not "${name.slice(0, 40)}".`, 'file'));
  }
  state.file = stream;
  const { type, charset } = mediaType(info.mimeType ?? '');
  try {
    refuseCharset(charset);
  } catch (error) {
    stream.resume();
    return state.fail(error as ApiError);
  }
  const byName = info.filename?.toLowerCase().match(/\.(csv|jsonl|ndjson)$/)?.[1];
  const named = byName === undefined ? null : byName === 'csv' ? ImportFormat.Csv : ImportFormat.Jsonl;
  state.resolve({
    chunks: stream,
    format: formatOf(type) ?? named,
    fields: { ...state.fields },
    truncated: () => stream.truncated === true,
  });
}

function openMultipart(req: Request): Promise<UploadedFile> {
  return new Promise((resolve, reject) => {
    let parser: ReturnType<typeof busboy>;
    try {
      parser = busboy({ headers: req.headers, limits: FORM_LIMITS });
    } catch (error) {
      return reject(formError(`The multipart body cannot be read: ${(error as Error).message}.`));
    }
    const state: FormState = {
      fields: {},
      file: null,
      resolve,
      fail: (error) => {
        req.unpipe(parser);
        reject(error);
      },
    };
    parser.on('field', (name, value) => onField(state, name, value));
    parser.on('file', (name, stream, info) => onFile(state, name, stream, info));
    for (const limit of ['partsLimit', 'filesLimit', 'fieldsLimit'] as const) {
      parser.on(limit, () =>
        state.fail(formError('The form has more parts than an upload takes: file, kind, dry_run, format.')),
      );
    }
    parser.on('error', (error) =>
      state.fail(formError(`The multipart body cannot be read: ${error.message}.`)),
    );
    parser.on('close', () => {
      if (state.file === null) {
        reject(formError('The form has no file part: send the rows as a part named "file".', 'file'));
      }
    });
    req.pipe(parser);
  });
}
