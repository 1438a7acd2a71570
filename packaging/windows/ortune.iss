; Inno Setup 6.3+ script for the Windows installer. packaging/build.py compiles it with
;   ISCC /DAppVersion=... /DBundleDir=... /DIconFile=... /DOutputDir=... ortune.iss
; after freezing and smoke-testing the app. The bundle already holds ONNX Runtime's DirectML
; build (onnxruntime-directml) with its DirectML.dll, so DirectML needs nothing else here.

#ifndef AppVersion
  #error Run through packaging/build.py, which passes AppVersion, BundleDir, IconFile and OutputDir
#endif

#define AppName "ORTune"
#define GuiExe "ortune-gui.exe"
#define ModelType "ORTune.Model"

[Setup]
AppId={{2F965F04-BC4F-4221-8DCE-F8E81254600A}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=ORTune developers
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
; Installs for everyone (asks for admin) or, if the user picks it, for the current user only.
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
; DirectML needs Windows 10 version 1903 or later.
MinVersion=10.0.18362
ChangesAssociations=yes
SetupIconFile={#IconFile}
UninstallDisplayIcon={app}\{#GuiExe}
UninstallDisplayName={#AppName}
OutputDir={#OutputDir}
OutputBaseFilename=ORTune-{#AppVersion}-windows-x64-setup
Compression=lzma2
SolidCompression=yes
WizardStyle=modern

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "associate"; Description: "Open .onnx and .ort models with {#AppName}"; GroupDescription: "File types:"

[Files]
Source: "{#BundleDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#GuiExe}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#GuiExe}"; Tasks: desktopicon

[Registry]
; A file type of our own, offered in Explorer's "Open with" for .onnx and .ort. It does not take
; the default away from another program: Windows asks the user the first time.
Root: HKA; Subkey: "Software\Classes\{#ModelType}"; ValueType: string; ValueName: ""; ValueData: "ONNX model"; Flags: uninsdeletekey; Tasks: associate
Root: HKA; Subkey: "Software\Classes\{#ModelType}\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\{#GuiExe},0"; Tasks: associate
Root: HKA; Subkey: "Software\Classes\{#ModelType}\shell\open"; ValueType: string; ValueName: ""; ValueData: "Open with {#AppName}"; Tasks: associate
Root: HKA; Subkey: "Software\Classes\{#ModelType}\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\{#GuiExe}"" gui ""%1"""; Tasks: associate
Root: HKA; Subkey: "Software\Classes\.onnx\OpenWithProgids"; ValueType: string; ValueName: "{#ModelType}"; ValueData: ""; Flags: uninsdeletevalue; Tasks: associate
Root: HKA; Subkey: "Software\Classes\.ort\OpenWithProgids"; ValueType: string; ValueName: "{#ModelType}"; ValueData: ""; Flags: uninsdeletevalue; Tasks: associate
Root: HKA; Subkey: "Software\Classes\Applications\{#GuiExe}"; ValueType: string; ValueName: "FriendlyAppName"; ValueData: "{#AppName}"; Flags: uninsdeletekey; Tasks: associate
Root: HKA; Subkey: "Software\Classes\Applications\{#GuiExe}\SupportedTypes"; ValueType: string; ValueName: ".onnx"; ValueData: ""; Tasks: associate
Root: HKA; Subkey: "Software\Classes\Applications\{#GuiExe}\SupportedTypes"; ValueType: string; ValueName: ".ort"; ValueData: ""; Tasks: associate

[Run]
Filename: "{app}\{#GuiExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent
