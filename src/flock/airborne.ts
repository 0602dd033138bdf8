// Which crows are in the air in this process right now: a rework asks its crew first, and takes
// another crow for one that is busy (docs/rules.md "Rework"). A view of this process's flights,
// never stored: after a restart nothing is in the air.
const flying = new Map<string, number>();

export function tookOff(crow: string): void {
  flying.set(crow, (flying.get(crow) ?? 0) + 1);
}

export function landed(crow: string): void {
  const left = (flying.get(crow) ?? 1) - 1;
  if (left > 0) flying.set(crow, left);
  else flying.delete(crow);
}

export function isAirborne(crow: string): boolean {
  return flying.has(crow);
}
