// busboy 1.6 ships no types and there is no @types package in the lock: what src/imports/upload.ts uses of it.
declare module 'busboy' {
  import type { IncomingHttpHeaders } from 'node:http';
  import type { Readable, Writable } from 'node:stream';

  interface BusboyLimits {
    fieldSize?: number;
    fields?: number;
    fileSize?: number;
    files?: number;
    parts?: number;
    headerPairs?: number;
  }

  interface FileInfo {
    filename: string | undefined;
    encoding: string;
    mimeType: string;
  }

  interface FieldInfo {
    nameTruncated: boolean;
    valueTruncated: boolean;
    encoding: string;
    mimeType: string;
  }

  interface BusboyStream extends Writable {
    on(
      event: 'file',
      listener: (name: string, stream: Readable & { truncated?: boolean }, info: FileInfo) => void,
    ): this;
    on(event: 'field', listener: (name: string, value: string, info: FieldInfo) => void): this;
    on(event: 'close' | 'partsLimit' | 'filesLimit' | 'fieldsLimit', listener: () => void): this;
    on(event: 'error', listener: (error: Error) => void): this;
  }

  function busboy(config: {
    headers: IncomingHttpHeaders;
    limits?: BusboyLimits;
    defParamCharset?: string;
  }): BusboyStream;
  export = busboy;
}
