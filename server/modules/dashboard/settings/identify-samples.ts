import type { JwtAlgorithm } from '../../../db/schema/index.ts'

// Copy-paste code that signs the identify token on the customer's server, one per language, for the
// workspace's algorithm and claims. Each reads the key from the environment, never from the page.

export interface SampleOptions { algorithm: JwtAlgorithm; issuer: string | null; audience: string | null }

const KEY_ENV = (algorithm: JwtAlgorithm) => (algorithm === 'HS256' ? 'CHORUS_JWT_SECRET' : 'CHORUS_JWT_PRIVATE_KEY')

/** Extra claims as "key: value" pairs in each language's map syntax. */
const extra = (o: SampleOptions, pair: (key: string, value: string) => string) =>
  [o.issuer !== null && pair('iss', o.issuer), o.audience !== null && pair('aud', o.audience)].filter(Boolean).map((line) => `${line}, `).join('')

export function identifySamples(o: SampleOptions): { language: string; id: string; code: string }[] {
  const env = KEY_ENV(o.algorithm)
  const hs = o.algorithm === 'HS256'
  const nodeSign = hs
    ? `createHmac('sha256', key).update(input).digest('base64url')`
    : `sign(${o.algorithm === 'EdDSA' ? 'null' : "'sha256'"}, Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')`
  const node = `// Node.js 18+ on your server, no dependencies. ${env} holds the ${hs ? 'secret Chorus showed you once' : 'private key (PEM)'}.
import { ${hs ? 'createHmac' : 'sign'} } from 'node:crypto'

export function chorusToken(user, key = process.env.${env}) {
  const now = Math.floor(Date.now() / 1000)
  const part = (value) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const claims = { ${extra(o, (k, v) => `${k}: ${JSON.stringify(v)}`)}sub: String(user.id), email: user.email, name: user.name, iat: now, exp: now + 3600 }
  const input = \`\${part({ alg: '${o.algorithm}', typ: 'JWT' })}.\${part(claims)}\`
  return \`\${input}.\${${nodeSign}}\`
}`
  const python = `# pip install "PyJWT[crypto]"  ·  ${env} holds the ${hs ? 'secret' : 'private key (PEM)'}
import os, time
import jwt

def chorus_token(user):
    now = int(time.time())
    claims = {${extra(o, (k, v) => `"${k}": ${JSON.stringify(v)}`)}"sub": str(user["id"]), "email": user["email"], "name": user["name"], "iat": now, "exp": now + 3600}
    return jwt.encode(claims, os.environ["${env}"], algorithm="${o.algorithm}")`
  const rubyKey = hs ? `ENV.fetch("${env}")` : o.algorithm === 'RS256' ? `OpenSSL::PKey::RSA.new(ENV.fetch("${env}"))` : o.algorithm === 'ES256' ? `OpenSSL::PKey::EC.new(ENV.fetch("${env}"))` : `OpenSSL::PKey.read(ENV.fetch("${env}"))`
  const ruby = `# gem install jwt${o.algorithm === 'EdDSA' ? ' jwt-eddsa' : ''}
require "jwt"

def chorus_token(user)
  now = Time.now.to_i
  claims = { ${extra(o, (k, v) => `${k}: ${JSON.stringify(v)}`)}sub: user.id.to_s, email: user.email, name: user.name, iat: now, exp: now + 3600 }
  JWT.encode(claims, ${rubyKey}, "${o.algorithm}")
end`
  const goMethod = { HS256: 'SigningMethodHS256', RS256: 'SigningMethodRS256', ES256: 'SigningMethodES256', EdDSA: 'SigningMethodEdDSA' }[o.algorithm]
  const goKey = hs ? `[]byte(os.Getenv("${env}"))` : `key`
  const goParse = hs ? '' : `\n\tkey, err := jwt.Parse${o.algorithm === 'RS256' ? 'RSA' : o.algorithm === 'ES256' ? 'EC' : 'Ed'}PrivateKeyFromPEM([]byte(os.Getenv("${env}")))\n\tif err != nil {\n\t\treturn "", err\n\t}`
  const go = `// go get github.com/golang-jwt/jwt/v5
import (
	"os"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func chorusToken(id, email, name string) (string, error) {${goParse}
	now := time.Now()
	claims := jwt.MapClaims{${extra(o, (k, v) => `"${k}": ${JSON.stringify(v)}`)}"sub": id, "email": email, "name": name, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	return jwt.NewWithClaims(jwt.${goMethod}, claims).SignedString(${goKey})
}`
  const php = `<?php
// composer require firebase/php-jwt  ·  ${env} holds the ${hs ? 'secret' : 'private key (PEM)'}
use Firebase\\JWT\\JWT;

function chorus_token(array $user): string {
    $now = time();
    $claims = [${extra(o, (k, v) => `'${k}' => ${JSON.stringify(v)}`)}'sub' => (string) $user['id'], 'email' => $user['email'], 'name' => $user['name'], 'iat' => $now, 'exp' => $now + 3600];
    return JWT::encode($claims, getenv('${env}'), '${o.algorithm}');
}`
  return [
    { language: 'Node.js', id: 'node', code: node },
    { language: 'Python', id: 'python', code: python },
    { language: 'Ruby', id: 'ruby', code: ruby },
    { language: 'Go', id: 'go', code: go },
    { language: 'PHP', id: 'php', code: php },
  ]
}
