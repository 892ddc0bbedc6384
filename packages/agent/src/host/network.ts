// What the box reports about its own network (Device: mac, wlan_mac, network_type, local_ip,
// gateway_ip), read from the OS. Interface naming follows systemd/udev: en*/eth* wired,
// wl* wireless, ww* cellular.
import { networkInterfaces } from 'node:os';
import { readFile } from 'node:fs/promises';

export interface NetworkInfo {
  mac?: string;
  wlan_mac?: string;
  network_type?: 'ethernet' | 'wifi' | 'cellular';
  local_ip?: string;
  gateway_ip?: string;
}

const kindOf = (name: string) =>
  /^wl/.test(name) ? 'wifi' : /^ww/.test(name) ? 'cellular' : /^(en|eth)/.test(name) ? 'ethernet' : undefined;

/** Default-route interface and gateway from /proc/net/route (little-endian hex). */
async function defaultRoute(): Promise<{ iface: string; gateway: string } | undefined> {
  try {
    const lines = (await readFile('/proc/net/route', 'utf8')).trim().split('\n').slice(1);
    for (const l of lines) {
      const [iface, dest, gw] = l.trim().split(/\s+/);
      if (iface && dest === '00000000' && gw) {
        const n = Number.parseInt(gw, 16);
        return { iface, gateway: [n & 255, (n >> 8) & 255, (n >> 16) & 255, (n >>> 24) & 255].join('.') };
      }
    }
  } catch {
    /* not Linux */
  }
  return undefined;
}

export async function readNetworkInfo(): Promise<NetworkInfo> {
  const ifs = networkInterfaces();
  const info: NetworkInfo = {};
  for (const [name, addrs] of Object.entries(ifs)) {
    const mac = addrs?.find((a) => !a.internal && a.mac !== '00:00:00:00:00:00')?.mac;
    if (!mac) continue;
    if (kindOf(name) === 'wifi') info.wlan_mac ??= mac;
    else if (kindOf(name) === 'ethernet') info.mac ??= mac;
  }
  const route = await defaultRoute();
  if (route) {
    info.gateway_ip = route.gateway;
    const kind = kindOf(route.iface);
    if (kind) info.network_type = kind;
    const v4 = ifs[route.iface]?.find((a) => a.family === 'IPv4');
    if (v4) info.local_ip = v4.address;
  }
  return info;
}
