import Check from "./check.js";

export default function ClientPage() {
  return <Check />;
}
