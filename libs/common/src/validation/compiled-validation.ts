import { TransformationType } from 'class-transformer';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import { getMetadataStorage, type ValidationArguments, ValidationTypes } from 'class-validator';

type Instance = Record<string, unknown>;
type Validate = (value: unknown, args: ValidationArguments) => unknown;

interface ConstraintCall {
  validate: Validate;
  constraints: unknown[];
}

interface PropertyPlan {
  name: string;
  /** IsOptional / ValidateIf: when one says no, the property is not validated. */
  conditions: ((object: unknown, value: unknown) => boolean)[];
  /** IsDefined first, then the other constraints, in class-validator's order. */
  checks: ConstraintCall[];
}

/**
 * A DTO's class-validator rules resolved once into a flat list, for the accept path of every request.
 *
 * class-validator looks up, filters and groups the class's metadata and builds an error object per
 * property on every call, which on the execution hot path costs more than the checks themselves.
 * A plan calls the same constraint implementations (so a value passes here exactly when it passes
 * there) without that bookkeeping. It only answers "valid, here is the instance" or "not sure":
 * on any failed check the caller runs class-validator itself, which builds the error report.
 * DTOs using what a plan does not model (nested or each-item validation, async constraints,
 * conditional `validateIf` options, groups) get no plan.
 */
export class ValidationPlan {
  private constructor(
    private readonly metatype: new () => object,
    private readonly properties: PropertyPlan[],
    /** No class-transformer metadata: the instance can be filled by copying the known fields. */
    private readonly plainCopy: boolean,
    private readonly toInstance: (value: object) => object,
  ) {}

  /**
   * The plan of a DTO class, or null when it uses something a plan does not model.
   * `toInstance` is the class-transformer conversion used when the class declares transformations.
   */
  static compile(metatype: new () => object, toInstance: (value: object) => object): ValidationPlan | null {
    const storage = getMetadataStorage();
    const metadatas = storage.getTargetValidationMetadatas(
      metatype,
      undefined as unknown as string,
      false,
      false,
      undefined,
    );
    const byName = new Map<string, PropertyPlan>();
    for (const metadata of metadatas) {
      if (metadata.each || metadata.validateIf || (metadata.groups?.length ?? 0) > 0) {
        return null;
      }
      let property = byName.get(metadata.propertyName);
      if (!property) {
        property = { name: metadata.propertyName, conditions: [], checks: [] };
        byName.set(metadata.propertyName, property);
      }
      switch (metadata.type) {
        case ValidationTypes.WHITELIST:
          break;
        case ValidationTypes.CONDITIONAL_VALIDATION:
          property.conditions.push(metadata.constraints[0] as (object: unknown, value: unknown) => boolean);
          break;
        case ValidationTypes.IS_DEFINED:
        case ValidationTypes.CUSTOM_VALIDATION: {
          const calls: ConstraintCall[] = [];
          for (const constraint of storage.getTargetValidatorConstraints(metadata.constraintCls)) {
            if (constraint.async) {
              return null;
            }
            const instance = constraint.instance;
            calls.push({ validate: instance.validate.bind(instance) as Validate, constraints: metadata.constraints });
          }
          if (metadata.type === ValidationTypes.IS_DEFINED) {
            property.checks.unshift(...calls);
          } else {
            property.checks.push(...calls);
          }
          break;
        }
        default:
          return null;
      }
    }
    const properties = [...byName.values()];
    const plainCopy =
      defaultMetadataStorage.getExposedMetadatas(metatype).length === 0 &&
      defaultMetadataStorage.getExcludedMetadatas(metatype).length === 0 &&
      properties.every(
        (property) =>
          defaultMetadataStorage.findTypeMetadata(metatype, property.name) === undefined &&
          defaultMetadataStorage.findTransformMetadatas(metatype, property.name, TransformationType.PLAIN_TO_CLASS)
            .length === 0,
      );
    return new ValidationPlan(metatype, properties, plainCopy, toInstance);
  }

  /** The validated instance (unknown fields dropped), or undefined when some check failed. */
  run(value: object): object | undefined {
    const instance = this.instance(value);
    for (const property of this.properties) {
      const field = instance[property.name];
      if (!property.conditions.every((condition) => condition(instance, field))) {
        continue;
      }
      for (const check of property.checks) {
        const args: ValidationArguments = {
          targetName: this.metatype.name,
          property: property.name,
          object: instance,
          value: field,
          constraints: check.constraints,
        };
        if (check.validate(field, args) !== true) {
          return undefined;
        }
      }
    }
    return instance;
  }

  private instance(value: object): Instance {
    if (this.plainCopy) {
      const instance = new this.metatype() as Instance;
      const source = value as Instance;
      for (const property of this.properties) {
        if (Object.hasOwn(source, property.name)) {
          instance[property.name] = source[property.name];
        }
      }
      return instance;
    }
    const instance = this.toInstance(value) as Instance;
    // What class-validator's whitelist does: fields without rules are dropped.
    for (const key of Object.keys(instance)) {
      if (!this.properties.some((property) => property.name === key)) {
        delete instance[key];
      }
    }
    return instance;
  }
}
