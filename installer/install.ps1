# Installs the audiobook studio on Windows: finds (or installs) Python 3.11, then runs
# installer\install.py, the installer Linux and macOS run too, with the same options.
#
#   powershell -ExecutionPolicy Bypass -File installer\install.ps1              # app + torch + Start-menu entry
#   powershell -ExecutionPolicy Bypass -File installer\install.ps1 --no-torch   # ONNX voices only (small)
#   ... --no-proof, --no-kokoro, --triton, --dev, --dry-run: see installer\install.py
#
# Python: the tested set (installer\constraints.txt, checked for Windows wheels in
# installer\wheels.json) was made with Python 3.11, so 3.11 is looked for first (the py
# launcher, then python on PATH), then 3.12 and 3.13. With none, winget installs Python 3.11
# for this user. Nothing else comes from outside pip: ffmpeg, PortAudio and espeak-ng's
# data arrive inside wheels.
$ErrorActionPreference = 'Stop'
$here = Split-Path -Parent $PSScriptRoot

function Find-Python {
    $launcher = Get-Command py -ErrorAction SilentlyContinue
    foreach ($version in '3.11', '3.12', '3.13') {
        if ($launcher) {
            & py "-$version" -c "import sys" 2>$null
            if ($LASTEXITCODE -eq 0) { return @('py', "-$version") }
        }
    }
    foreach ($name in 'python', 'python3') {
        $found = Get-Command $name -ErrorAction SilentlyContinue
        # the WindowsApps python.exe is the Store's stub, which opens the Store instead of running
        if ($found -and $found.Source -notlike '*\WindowsApps\*') {
            & $found.Source -c "import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] <= (3, 13) else 1)" 2>$null
            if ($LASTEXITCODE -eq 0) { return @($found.Source) }
        }
    }
    return $null
}

$python = Find-Python
if (-not $python) {
    if (Get-Command winget -ErrorAction SilentlyContinue) {
        Write-Host '[install] Python 3.11: not found; installing it for this user with winget'
        winget install --exact --id Python.Python.3.11 --scope user --silent --accept-package-agreements --accept-source-agreements
        $env:Path = [Environment]::GetEnvironmentVariable('Path', 'User') + ';' + [Environment]::GetEnvironmentVariable('Path', 'Machine')
        $python = Find-Python
    }
    if (-not $python) {
        Write-Error 'Python 3.11 is needed: install it from https://www.python.org/downloads/windows/ (tick "Add python.exe to PATH"), then run this again.'
        exit 1
    }
}
Write-Host "[install] Python: $($python -join ' ')"
$exe = $python[0]
$pre = @($python | Select-Object -Skip 1)
& $exe @pre (Join-Path $here 'installer\install.py') @args
exit $LASTEXITCODE
