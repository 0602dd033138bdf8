// esbuild bundles the stylesheet the entry imports (console/build.ts).
declare module "*.css";
