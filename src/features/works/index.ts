// What other modules may use of this feature: everything else in it is private.
export * from './common/steering';
export * from './common/steeringService';
