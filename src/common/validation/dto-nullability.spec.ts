import 'reflect-metadata';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { getMetadataStorage, validate, ValidationTypes } from 'class-validator';
import { isOptionalProperty } from './optional';

const SRC = join(__dirname, '..', '..');

/** Every module that declares request DTOs: src/**\/dto/*.ts, and the page query every list extends. */
function dtoModules(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return dtoModules(path);
    }
    const inDto = relative(SRC, dir).split(/[\\/]/).includes('dto');
    return inDto && entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Loads every DTO module, so class-validator's metadata holds every request class. */
async function loadDtoModules(): Promise<void> {
  await Promise.all([...dtoModules(), join(SRC, 'common', 'pagination.ts')].map((path) => import(path)));
}

/** Every class class-validator knows, with the properties it checks (its own and inherited). */
function validatedClasses(): Map<new () => object, string[]> {
  // class-validator keeps its per-class metadata in a private map; its public API asks per class.
  const storage = getMetadataStorage() as unknown as {
    validationMetadatas: Map<new () => object, unknown[]>;
  };
  const classes = new Map<new () => object, string[]>();
  for (const type of storage.validationMetadatas.keys()) {
    const properties = getMetadataStorage()
      .getTargetValidationMetadatas(type, '', true, false)
      .filter((metadata) => metadata.type !== ValidationTypes.WHITELIST)
      .map((metadata) => metadata.propertyName);
    classes.set(type, [...new Set(properties)]);
  }
  return classes;
}

/** What @nestjs/swagger documents for the property (ApiProperty and the decorators built on it). */
function documentedNullable(type: new () => object, property: string): boolean {
  const swagger = Reflect.getMetadata('swagger/apiModelProperties', type.prototype, property) as
    { nullable?: boolean } | undefined;
  return swagger?.nullable === true;
}

async function acceptsNull(type: new () => object, property: string): Promise<boolean> {
  const instance = Object.assign(new type(), { [property]: null });
  const errors = await validate(instance, { whitelist: true, forbidNonWhitelisted: true });
  return !errors.some((error) => error.property === property);
}

describe('request DTOs and null', () => {
  let classes: Map<new () => object, string[]>;
  beforeAll(async () => {
    await loadDtoModules();
    classes = validatedClasses();
  });

  it('should find the request DTOs', () => {
    const names = [...classes.keys()].map((type) => type.name);
    expect(names).toEqual(
      expect.arrayContaining(['AllocateDto', 'CreateTransactionDto', 'UpdateSubscriberDto', 'AddressDto']),
    );
    expect(classes.size).toBeGreaterThan(30);
  });

  it('should accept null exactly where the document says nullable, and never for a required field', async () => {
    const wrong: string[] = [];
    for (const [type, properties] of classes) {
      for (const property of properties) {
        const name = `${type.name}.${property}`;
        const accepts = await acceptsNull(type, property);
        if (!isOptionalProperty(new type(), property)) {
          if (accepts) {
            wrong.push(`${name} is required but accepts null`);
          }
          continue;
        }
        const nullable = documentedNullable(type, property);
        if (accepts && !nullable) {
          wrong.push(
            `${name} accepts null but is not declared nullable: use @Optional(), or @OptionalNullable()`,
          );
        }
        if (!accepts && nullable) {
          wrong.push(`${name} is documented nullable but refuses null: use @OptionalNullable()`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});
