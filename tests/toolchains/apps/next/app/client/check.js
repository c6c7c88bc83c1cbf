"use client";
// A client component: lapse runs in the browser after hydration.
import { useEffect, useState } from "react";
import { TtlCache } from "lapse";
import { smoke } from "../../src/smoke.mjs";

export default function Check() {
  const [state, setState] = useState("pending");
  useEffect(() => {
    let result;
    try {
      result = smoke(TtlCache);
    } catch (e) {
      result = { ok: false, error: String(e?.stack ?? e) };
    }
    window.__lapse = result;
    document.body.dataset.lapse = result.ok ? "ok" : "failed";
    setState(result.ok ? "ok" : "failed");
  }, []);
  return <p id="client">{state}</p>;
}
